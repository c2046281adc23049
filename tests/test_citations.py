"""Citations: each answer sentence with the passages that support it."""

from __future__ import annotations

from mtrag_graph.citations import CitedAnswer, answer_citations, grounding_sentences
from mtrag_graph.graph import build_graph
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    {"document_id": "eiffel", "text": "The Eiffel Tower opened to the public on 15 May 1889 in Paris."},
    {"document_id": "liberty", "text": "The Statue of Liberty was dedicated on 28 October 1886 in New York."},
]


def test_each_sentence_cites_the_passage_that_holds_its_words():
    rows = grounding_sentences(
        "The Eiffel Tower opened on 15 May 1889. The Statue of Liberty was dedicated in 1886.", PASSAGES
    )
    assert [(r["passages"], r["document_ids"], r["supported"]) for r in rows] == [
        ([0], ["eiffel"], True),
        ([1], ["liberty"], True),
    ]
    assert {"text", "supported", "passages", "document_ids", "score"} <= set(rows[0])


def test_a_sentence_the_passages_do_not_hold_cites_nothing_and_is_unsupported():
    (row,) = grounding_sentences("Bananas grow quickly in tropical greenhouses.", PASSAGES)
    assert row["passages"] == [] and row["supported"] is False and row["score"] < 0.5


def test_the_grounding_check_wins_when_the_state_has_one_and_its_dropped_sentences_are_left_out():
    kept = {"text": "x", "supported": True, "passages": [1], "document_ids": ["liberty"], "score": 0.9}
    cut = {"text": "y", "supported": False, "passages": [0], "document_ids": ["eiffel"], "score": 0.1}
    grounding = {"sentences": [kept, cut], "dropped": 1}
    state = {"answer": "The Eiffel Tower opened in 1889.", "kept_passages": PASSAGES, "grounding": grounding}
    assert answer_citations(state) == [kept]
    assert answer_citations({**state, "grounding": None})[0]["document_ids"] == ["eiffel"]


def test_the_graph_writes_the_grounding_check_the_predictions_cite():
    task = make_task(["When did the Eiffel Tower open?"], [p["text"] for p in PASSAGES])
    state = build_graph(output="state").invoke(
        {"task": task},
        context=fake_context(
            grounding="facts", generate=["The Eiffel Tower opened to the public on 15 May 1889."]
        ),
    )
    assert state["grounding"]["sentences"][0]["passages"] == [0]
    assert [c["document_ids"] for c in answer_citations(state)] == [["d0"]]


def test_an_abstention_cites_nothing():
    state = {"answer": "I don't know.", "kept_passages": PASSAGES, "abstain_reason": "gate_no"}
    assert answer_citations(state) == []


def test_markers_number_passages_in_order_of_first_citation_on_supported_sentences():
    rows = [
        {"text": "B first.", "passages": [1], "supported": True},
        {"text": "Both.", "passages": [0, 1], "supported": True},
        {"text": "None.", "passages": [], "supported": True},
        {"text": "Unsupported.", "passages": [2], "supported": False},
    ]
    cited = CitedAnswer(
        "B first. Both. None. Unsupported.", rows, [{"document_id": "a"}, {"document_id": "b"}]
    )
    assert cited.text == "B first. [1] Both. [2][1] None. Unsupported."
    assert [(s.number, s.index, s.document_id) for s in cited.sources] == [(1, 1, "b"), (2, 0, "a")]
    assert [p["cites"] for p in cited.parts] == [[1], [2, 1], [], []]


def test_an_answer_that_cites_nothing_is_itself_in_one_part():
    cited = CitedAnswer("I don't know.", [{"text": "I don't know.", "passages": [], "supported": True}], [])
    assert (cited.text, cited.parts, cited.sources) == (
        "I don't know.",
        [{"text": "I don't know.", "cites": []}],
        [],
    )


def test_the_answer_after_a_reply_to_a_clarifying_question_is_cited_and_the_question_is_not():
    answered = {
        "answer": "The Alameda library opens at 9 am.",
        "clarification": {"asked": True, "question": "Which library?", "reply": "Alameda"},
        "grounding": {
            "sentences": [{"text": "The Alameda library opens at 9 am.", "supported": True, "passages": [0]}]
        },
        "kept_passages": [{"document_id": "a", "text": "The Alameda library opens at 9 am."}],
    }
    assert [s["passages"] for s in answer_citations(answered)] == [[0]]
    asked = {
        **answered,
        "answer": "Which library?",
        "clarification": {"asked": True, "question": "Which library?"},
    }
    assert answer_citations(asked) == []
