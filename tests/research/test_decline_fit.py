from __future__ import annotations

from research.decline_fit import features, table, totals


def _row(task_id: str, label: str, p: float | None, gate: float = 0.6) -> dict:
    route = {"gate_evidence": {"score": gate, "features": {"cos_max": 0.5}}, "decline_retried": False}
    if p is not None:
        route["grounding"] = {"samples": {"p_decline": p}}
    return {"task_id": f"{task_id}<::>2", "answerability": [label], "route": route}


def test_only_answers_that_reached_the_samples_check_have_signals():
    assert features(_row("a", "ANSWERABLE", None)) is None
    signals = features(_row("a", "PARTIAL", 0.07, gate=0.55))
    assert signals is not None
    assert (signals["label"], signals["p"], signals["gate"], signals["turn"]) == ("P", 0.07, 0.55, 2)
    assert features(_row("u", "UNANSWERABLE", 0.2))["label"] == "U"


def test_the_table_counts_declines_on_each_side():
    signals = [
        features(_row("u1", "UNANSWERABLE", 0.2, gate=0.5)),
        features(_row("u2", "UNANSWERABLE", 0.01)),
        features(_row("p1", "ANSWERABLE", 0.09, gate=0.7)),
    ]
    lines = table(signals)
    assert lines[0] == "reaching the check: 2 UNANSWERABLE, 1 ANSWERABLE+PARTIAL"
    assert "| p >= 0.05 | 1 | 1 | -0.500 |" in lines
    assert "| p >= 0.05, gate < 0.6 | 1 | 0 | +0.500 |" in lines
    assert "| p >= 0.1 | 1 | 0 | +0.500 |" in lines


def _turn(label, p=None, abstained=False, asked=False):
    route = {"abstained": abstained, "clarification": {"asked": asked}}
    if p is not None:
        route["grounding"] = {"samples": {"p_decline": p}}
    return {"task_id": "t<::>1", "answerability": [label], "route": route}


def test_totals_decline_answers_at_or_above_the_threshold_and_keep_declines_and_questions():
    rows = [
        _turn("UNANSWERABLE", abstained=True),
        _turn("UNANSWERABLE", p=0.02),
        _turn("UNANSWERABLE", p=0.2, asked=True),  # asked back: stays a question
        _turn("ANSWERABLE", p=0.01),
        _turn("PARTIAL", p=0.03),
        _turn("ANSWERABLE"),  # no probability recorded: stays an answer
        _turn("UNDERSPECIFIED", p=0.5),  # neither side
    ]
    strict, loose = totals(rows, [0.01, 0.05])
    assert (strict["unanswerable_declined"], strict["unanswerable"]) == (2, 3)
    assert (strict["positive_declined"], strict["positive"]) == (2, 3)
    assert (loose["unanswerable_declined"], loose["positive_declined"]) == (1, 0)
