"""The first-shown table of bench runs: first turns and follow-ups apart."""

from __future__ import annotations

from benchmarks.first_shown import table


def record(turns: int, shown: float | None, seconds: float, processed: int, retries: int = 0) -> dict:
    route = {"first_shown_seconds": shown, "seconds": seconds, "prompt_tokens_processed": processed,
             "model_calls": 2, "retries": retries}  # fmt: skip
    return {"status": "ok", "input": [{"speaker": "user", "text": "q"}] * turns, "route": route}


def test_first_turns_and_follow_ups_are_reported_apart():
    runs = {
        "after": [record(1, 4.0, 6.0, 500), record(1, 6.0, 8.0, 700), record(3, 9.0, 12.0, 900, retries=1)],
    }
    text = table(runs)
    assert "| after | first turn | 2 | 4.0 / 6.0 | 6.0 | 600 | 2.0 | 0 of 2 |" in text
    assert "| after | follow-up | 1 | 9.0 / 9.0 | 12.0 | 900 | 2.0 | 1 of 1 |" in text
