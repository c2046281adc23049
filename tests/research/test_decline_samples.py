"""research/decline_samples: the table that chose the answer samples' rule."""

from __future__ import annotations

from research.decline_samples import row_of, summary


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
