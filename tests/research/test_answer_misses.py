"""research/answer_misses.py: each answerable miss lands in the row of where it was lost."""

from __future__ import annotations

from research.answer_misses import outcome

FACTS = (("3 seconds",),)
PASSAGE = {"text": "The benchmark runs for 3 seconds by default. Its -i option sets the running time."}
FILLER = {"text": "Unrelated words about licences fill this passage. " * 12}


def _record(*passages, question="How long does the benchmark run by default?"):
    return {"input": [{"speaker": "user", "text": question}], "contexts": list(passages), "route": {}}


def test_a_right_answer_and_a_retrieval_miss_need_no_excerpt():
    assert outcome({"right": True}, _record(), FACTS, 300, None) == "right"
    assert outcome({"right": False, "retrieved": False}, _record(FILLER), FACTS, 300, None) == "not kept"


def test_a_fact_shown_to_the_model_is_a_reading_miss_declined_or_wrong():
    shown = _record(PASSAGE)
    assert outcome({"retrieved": True, "idk": True}, shown, FACTS, 300, None) == "shown, declined"
    assert outcome({"retrieved": True, "asked_back": True}, shown, FACTS, 300, None) == "shown, declined"
    assert outcome({"retrieved": True}, shown, FACTS, 300, None) == "shown, answered wrong"


def test_a_fact_the_budget_left_out_of_the_excerpt_is_cut():
    # the question's words are in the first passage, the fact in a second that shares none of them
    record = _record(
        {"text": "Licences are listed in the LICENSE file. " * 8},
        {"text": "Timing: 3 seconds."},
        question="Where are the licences listed?",
    )
    assert outcome({"retrieved": True}, record, FACTS, 10, None) == "cut from the excerpt"
    assert outcome({"retrieved": True}, record, FACTS, 10_000, None) == "shown, answered wrong"
