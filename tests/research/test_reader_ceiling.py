"""research.reader_ceiling: right answers reachable over variant runs; the decline threshold replayed."""

from __future__ import annotations

import json

from research import reader_ceiling


def _write_run(folder, verdicts):
    folder.mkdir()
    (folder / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")
    return folder


def _verdict(task_id, right, follow_up=False, answerable=True):
    return {"task_id": task_id, "right": right, "follow_up": follow_up, "answerable": answerable}


def test_a_task_is_reachable_when_any_run_answered_it_right(tmp_path, capsys):
    first = _write_run(
        tmp_path / "a",
        [_verdict("d-1<::>1", True), _verdict("d-1<::>2", False, True), _verdict("d-2<::>1", False),
         _verdict("d-3<::>1", False, answerable=False)],
    )  # fmt: skip
    second = _write_run(
        tmp_path / "b",
        [_verdict("d-1<::>1", False), _verdict("d-1<::>2", True, True), _verdict("d-2<::>1", False),
         _verdict("d-3<::>1", True, answerable=False)],
    )  # fmt: skip
    assert reader_ceiling.main(["documents", str(first), str(second)]) == 0
    printed = capsys.readouterr().out
    assert "| a | 1 | 1 | 0 |" in printed and "| b | 1 | 0 | 1 |" in printed
    # the unanswerable task's "right" is not counted; d-2 turn 1 is right in no run
    assert "**2 (67%)**" in printed and "Right in no run (1): d-2<::>1" in printed


def test_a_missing_verdicts_file_is_named(tmp_path, capsys):
    assert reader_ceiling.main(["documents", str(tmp_path)]) == 2
    assert "verdicts.jsonl: no such file" in capsys.readouterr().err


def _record(label, p=None, abstained=False, asked=False):
    route = {"abstained": abstained, "clarification": {"asked": asked}}
    if p is not None:
        route["grounding"] = {"samples": {"p_decline": p}}
    return {"task_id": "t<::>1", "answerability": [label], "route": route}


def test_the_threshold_declines_answers_at_or_above_it_and_keeps_declines_and_questions():
    records = [
        _record("UNANSWERABLE", abstained=True),
        _record("UNANSWERABLE", p=0.02),
        _record("UNANSWERABLE", p=0.2, asked=True),  # asked back: stays a question
        _record("ANSWERABLE", p=0.01),
        _record("PARTIAL", p=0.03),
        _record("ANSWERABLE"),  # no probability recorded: stays an answer
        _record("UNDERSPECIFIED", p=0.5),  # neither side
    ]
    strict, loose = reader_ceiling.frontier(records, [0.01, 0.05])
    assert (strict["unanswerable_declined"], strict["unanswerable"]) == (2, 3)
    assert (strict["positive_declined"], strict["positive"]) == (2, 3)
    assert (loose["unanswerable_declined"], loose["positive_declined"]) == (1, 0)
