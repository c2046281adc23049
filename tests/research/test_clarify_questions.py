"""research/clarify_questions.py: every clarifying question of a run beside the user's turn, and whether
it names something the user or the conversation said."""

from __future__ import annotations

import json

import numpy as np

from research.clarify_questions import main, named_words, options_of, rows_of, table

SITCOM = "Who played the father in this TV sitcom on ABC?"
ECLIPSES = [
    {"speaker": "user", "text": "When can I see an eclipse?"},
    {"speaker": "agent", "text": "A lunar eclipse at night; a solar eclipse along a narrow path."},
    {"speaker": "user", "text": "How long does it last?"},
]


def prediction(task_id: str, turns: list[dict], clarification: dict, label: str = "UNDERSPECIFIED") -> dict:
    """A record as ``mtrag-graph answer -o`` writes it: the task, its prediction and route."""
    return {
        "task_id": task_id,
        "input": turns,
        "answerability": [label],
        "predictions": [{"text": clarification.get("question", "An answer.")}],
        "route": {"clarification": clarification},
        "status": "ok",
    }


RUN = [
    prediction("sitcom<::>1", [{"speaker": "user", "text": SITCOM}],
               {"asked": True, "question": "Which sitcom do you mean?", "evidence": "orphan: 'this TV'"}),
    prediction("eclipse<::>2", ECLIPSES,
               {"asked": True, "question": "Which eclipse do you mean: lunar eclipse or solar eclipse?"}),
    prediction("vague<::>1", [{"speaker": "user", "text": "What are the steps?"}],
               {"asked": True, "question": "Could you say more precisely what you are asking about?"}),
    prediction("clear<::>1", [{"speaker": "user", "text": "How do bees talk?"}], {"asked": False}, "ANSWERABLE"),
]  # fmt: skip


def test_every_question_asked_is_listed_beside_the_users_turn():
    rows = rows_of(RUN, {})
    assert [r["task_id"] for r in rows] == ["sitcom<::>1", "eclipse<::>2", "vague<::>1"]
    assert rows[0]["turn"] == SITCOM and rows[0]["question"] == "Which sitcom do you mean?"
    assert rows[1]["turn"] == "How long does it last?" and rows[1]["class"] == "UNDERSPECIFIED"


def test_a_question_names_something_when_a_word_of_its_referent_or_options_was_said():
    rows = rows_of(RUN, {})
    assert rows[0]["found"] == ["sitcom"]  # the user's turn
    assert rows[1]["found"] == ["eclipse", "lunar", "solar"]  # the conversation
    assert rows[2]["found"] == []  # the fallback names nothing
    assert table(rows).endswith("2 of 3 questions name something from the user's turn or the conversation.")


def test_a_referent_the_user_never_said_is_not_counted():
    rows = rows_of([prediction("x<::>1", [{"speaker": "user", "text": SITCOM}],
                               {"asked": True, "question": "Which show do you mean?"})], {})  # fmt: skip
    assert rows[0]["found"] == []
    assert "**nothing**" in table(rows)


def test_the_pronoun_question_names_the_quoted_word():
    assert named_words("What do you mean by 'it'?") == ["it"]
    assert named_words("Could you say more precisely what you are asking about?") == []


def test_options_are_read_from_the_alternatives_question_with_commas_inside_brackets_kept():
    question = "Which one do you mean: Veterans Resources (Sierra County, CA), Alaska or Hawaii (island)?"
    assert options_of(question) == ["Veterans Resources (Sierra County, CA)", "Alaska", "Hawaii (island)"]
    assert options_of("Which sitcom do you mean?") == []


def test_with_an_embedder_the_options_far_from_the_users_turn_are_flagged():
    key = "Could you shed light on the key aspects of the power wielded by the Prime Minister?"
    asked = "Which key do you mean: session key, Diffie-Hellman key or secret key?"
    record = prediction("key<::>3", [{"speaker": "user", "text": key}], {"asked": True, "question": asked})

    def embed(texts):  # the user's turn on one axis; options on another, "secret key" between
        rows = [[1.0, 0.0] if t == key else [0.5, 0.5] if "secret" in t else [0.0, 1.0] for t in texts]
        return np.asarray(rows) / np.linalg.norm(rows, axis=1, keepdims=True)

    rows = rows_of([record], {}, embed)
    assert [o for o, _ in rows[0]["far"]] == ["session key", "Diffie-Hellman key"]
    assert "1 of 1 offer an option whose cosine" in table(rows)


def test_decision_results_find_the_conversation_in_the_task_files(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"task_id": "eclipse<::>2", "input": ECLIPSES, "answerability": ["UNDERSPECIFIED"]})
    )
    results = tmp_path / "clarify-tuning.jsonl"
    rows = [{"item_id": "clarify:eclipse<::>2", "task_id": "eclipse<::>2", "clarify": True,
             "question_asked": "Which eclipse do you mean: lunar eclipse or solar eclipse?"},
            {"item_id": "clarify:other", "task_id": "other", "clarify": False}]  # fmt: skip
    results.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main([str(results), "--tasks", str(tasks)]) == 0
    out = capsys.readouterr().out
    assert "| eclipse<::>2 | UNDERSPECIFIED | How long does it last? |" in out
    assert "1 of 1 questions name something" in out


def test_a_missing_run_file_is_named(tmp_path, capsys):
    assert main([str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err
