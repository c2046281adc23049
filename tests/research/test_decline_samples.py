"""research/decline_samples: the table that chose the answer samples' rule."""

from __future__ import annotations

from research.decline_samples import row_of, summary
from research.samples_offline import apply_rule


def _row(name: str, disagree: int, answered: bool = True) -> dict:
    samples = ["x"] * 3
    return {"row": name, "answered": answered,
            "sample": {"p_decline": 0.1, "samples": samples, "declined": 0, "disagree": ["d"] * disagree}}  # fmt: skip


def test_rows_are_named_by_the_verdict():
    assert row_of({"answerable": False}) == "unanswerable"
    assert row_of({"answerable": True, "right": True}) == "answerable, right"
    assert row_of({"answerable": True, "right": False}) == "answerable, not right"


def test_the_sweep_counts_answered_tasks_with_at_least_that_many_disagreeing_samples():
    rows = [_row("unanswerable", 3), _row("unanswerable", 1), _row("answerable, right", 1),
            _row("answerable, right", 0), _row("unanswerable", 3, answered=False)]  # fmt: skip
    table = summary(rows, ["sample"])
    assert "| 1 | 2/2 | 1/2 | 0/0 |" in table
    assert "| 2 | 1/2 | 0/2 | 0/0 |" in table


def test_a_recorded_answer_with_enough_disagreeing_samples_becomes_the_decline():
    samples = {"replies": ["I don't know.", "It was 2021."]}
    record = {"route": {"grounding": {"samples": samples}, "standalone_question": "When was it?"},
              "input": [{"speaker": "user", "text": "When?"}],
              "predictions": [{"text": "It was 2018.", "citations": [{"x": 1}]}]}  # fmt: skip
    assert apply_rule(record, 3, "IDK") is record
    declined = apply_rule(record, 2, "IDK")
    assert declined["predictions"] == [{"text": "IDK", "citations": []}]
    assert declined["route"]["abstain_reason"] == "model_unsure"
