"""research/retry_fit.py: the rule that picks a signal's threshold on answers the decline retry wrote."""

from __future__ import annotations

from research.retry_fit import fit, outcome


def _record(label: str, p_yes: float | None, retried: bool = True, declined: bool = False) -> dict:
    route = {"decline_retried": retried, "abstained": declined}
    return {
        "answerability": [label],
        "predictions": [{"text": "I don't know." if declined else "An answer."}],
        "route": route,
        "_signals": {} if p_yes is None or declined or not retried else {"p_yes": p_yes},
    }


ROWS = [
    _record("UNANSWERABLE", 0.3),
    _record("UNANSWERABLE", 0.5),
    _record("UNANSWERABLE", 0.9),
    _record("UNANSWERABLE", None, declined=True),
    *[_record("ANSWERABLE", None, retried=False) for _ in range(16)],
    _record("ANSWERABLE", 0.4),
    _record("ANSWERABLE", 0.8),
    _record("PARTIAL", 0.95),
    _record("ANSWERABLE", None, declined=True),
]


def test_outcome_counts_every_declined_turn_and_the_policys():
    assert outcome(ROWS, lambda r: False) == (0.25, 0.05)
    assert outcome(ROWS, lambda r: r["_signals"]["p_yes"] < 0.6) == (0.75, 0.1)


def test_the_threshold_declines_most_within_the_extra_loss_budget():
    # one more positive lost (5 points of 20) is allowed: 0.5 < t <= 0.8 declines two UNANSWERABLE
    threshold, unanswerable, lost = fit(ROWS, "p_yes", 0.05)
    assert (unanswerable, lost) == (0.75, 0.1)
    assert 0.4 < threshold <= 0.8
    # no budget: only thresholds that lose no positive, 0.3 < t <= 0.4
    assert fit(ROWS, "p_yes", 0.0)[1:] == (0.5, 0.05)
    assert fit(ROWS, "gate", 0.05) is None
