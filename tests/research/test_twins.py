"""The clarify twin set: an underspecified twin and the original answerable twin per named-entity turn."""

from __future__ import annotations

from mtrag_graph.models.fake import ScriptedChatModel
from research.twins import (
    bare_question,
    build_twins,
    model_kinds,
    named_entity,
    parse_kind,
)


def _task(conversation: str, question: str, passage: str, *, earlier: str = "What is open today?") -> dict:
    return {
        "task_id": f"{conversation}<::>2",
        "conversation_id": conversation,
        "Collection": "mt-rag-govt-elser-512-100-20240611",
        "input": [
            {"speaker": "user", "text": earlier},
            {"speaker": "agent", "text": "Several offices are open."},
            {"speaker": "user", "text": question},
        ],
        "contexts": [
            {"document_id": f"{conversation}-0", "title": passage.split(" offers")[0], "text": passage}
        ],
        "answerability": ["ANSWERABLE"],
        "targets": [{"speaker": "agent", "text": "gold"}],
    }


TASKS = [
    _task(
        "c1", "What does the Causeway VA Clinic offer?", "Causeway VA Clinic offers labs; the clinic is open."
    ),
    _task(
        "c2", "What does the Hibbing VA Clinic offer?", "Hibbing VA Clinic offers care; the clinic is small."
    ),
    _task("c3", "How long is the season?", "The season lasts ten weeks."),  # no name: no twin
]


def test_a_turn_naming_an_entity_its_passages_hold_gets_an_underspecified_and_an_answerable_twin():
    twins = build_twins(TASKS, seed=0)
    roles = [(t["twin"]["source"], t["twin"]["role"]) for t in twins]
    assert roles == [("c1<::>2", "answerable"), ("c1<::>2", "underspecified"),
                     ("c2<::>2", "answerable"), ("c2<::>2", "underspecified")]  # fmt: skip
    answerable, underspecified = twins[0], twins[1]
    assert answerable["input"] == TASKS[0]["input"] and answerable["answerability"] == ["ANSWERABLE"]
    assert underspecified["answerability"] == ["UNDERSPECIFIED"]
    assert "Causeway" not in " ".join(t["text"] for t in underspecified["input"])
    assert underspecified["input"][-1]["text"] in (
        "What does this clinic offer?",
        "What does the clinic offer?",
    )
    # both twins see the same passages: their own and another clinic's
    assert answerable["contexts"] == underspecified["contexts"]
    assert {p["document_id"] for p in underspecified["contexts"]} == {"c1-0", "c2-0"}


def test_the_same_seed_builds_the_same_set():
    assert build_twins(TASKS, seed=3) == build_twins(TASKS, seed=3)


def test_a_name_without_a_common_head_word_becomes_it():
    raw = _task("c4", "When was Hamlet written?", "Hamlet offers a tragedy written around 1600.")
    assert named_entity(raw) == {"name": "Hamlet", "kind": ""}
    assert bare_question("When was Hamlet written?", "Hamlet", "it") == "When was it written?"
    assert bare_question(
        "What is the Causeway VA Clinic's address?", "Causeway VA Clinic", "this clinic"
    ) == ("What is this clinic's address?")


def _later(conversation: str, earlier: str, answer: str, question: str, title: str) -> dict:
    task = _task(conversation, question, f"{title} offers help.", earlier=earlier)
    task["input"][1]["text"] = answer
    task["contexts"][0]["title"] = title
    return task


def test_a_later_turn_whose_pronoun_the_conversation_resolves_gets_a_changed_conversation_twin():
    tasks = [
        _later("t1", "Who is Thor?", "Thor is a god; he wields a hammer.", "Does he have powers?", "Thor"),
        _later("t2", "Who is Loki?", "Loki is his brother; he tricks.", "Does he age?", "Loki"),
        _later("t3", "When do parks open?", "At nine.", "Are parks free?", "Parks"),  # no pronoun: no twin
    ]
    twins = [t for t in build_twins(tasks, seed=0) if t["twin"]["form"] == "reference"]
    assert [(t["twin"]["source"], t["twin"]["role"]) for t in twins] == [
        ("t1<::>2", "answerable"), ("t1<::>2", "underspecified"),
        ("t2<::>2", "answerable"), ("t2<::>2", "underspecified"),
    ]  # fmt: skip
    answerable, underspecified = twins[0], twins[1]
    assert answerable["input"] == tasks[0]["input"]
    # the question word for word, after an exchange with nobody called "he" and no title word in it
    assert underspecified["input"][-1] == tasks[0]["input"][-1]
    assert [t["text"] for t in underspecified["input"][:-1]] == ["When do parks open?", "At nine."]
    assert underspecified["twin"]["reference"] == "he"
    assert answerable["contexts"] == underspecified["contexts"]
    assert build_twins(tasks, seed=1) == build_twins(tasks, seed=1)


def test_a_kind_reply_is_one_common_noun_not_a_word_of_the_name():
    assert parse_kind("Country.", "Israel") == "country"
    assert parse_kind("a country", "Israel") == "country"
    assert parse_kind("river", "Snake River") is None  # the name's own head word tells nothing new
    assert parse_kind("It is a country", "Israel") is None
    assert parse_kind("the", "Israel") is None


def test_kind_twins_refer_to_the_thing_by_the_kind_the_model_names():
    tasks = [
        _task("k1", "What is the population of Israel?", "Israel offers beaches."),
        _task("k2", "What is the population of Egypt?", "Egypt offers pyramids."),
    ]
    # the first reply is no noun: asked again once; Egypt's replies are never one noun: left out
    model = ScriptedChatModel(responses=["It is a country in Asia", "country", "", "a big one"])
    kinds = model_kinds(tasks, model)
    assert kinds == {"Israel": "country"}
    twins = [t for t in build_twins(tasks, seed=0, kinds=kinds) if t["twin"]["form"] == "kind"]
    assert [t["twin"]["role"] for t in twins] == ["answerable", "underspecified"]
    assert twins[1]["input"][-1]["text"] == "What is the population of the country?"
    assert twins[1]["twin"]["kind"] == "country"
    # no kinds: no kind twins, the rest unchanged
    assert build_twins(tasks, seed=0) == [
        t for t in build_twins(tasks, seed=0, kinds=kinds) if t["twin"]["form"] != "kind"
    ]
