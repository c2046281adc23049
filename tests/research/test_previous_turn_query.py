"""research/previous_turn_query.py: which follow-ups it replays, what it counts, its table."""

from __future__ import annotations

import json
from pathlib import Path

from research import previous_turn_query as ptq


def _task(task_id: str, turns: list[str], answerability: str = "ANSWERABLE") -> dict:
    speakers = ["user", "agent"] * len(turns)
    return {
        "task_id": task_id, "Collection": "c", "answerability": [answerability],
        "input": [{"speaker": s, "text": t} for s, t in zip(speakers, turns, strict=False)],
        "reference_contexts": [{"document_id": "gold"}],
        "route": {"standalone_question": turns[-1] + " (rewritten)", "kept_passages": [{"document_id": "x"}, {"document_id": "gold"}]},
    }  # fmt: skip


def test_only_answerable_follow_ups_are_replayed_and_the_third_query_is_the_turn_before(
    tmp_path: Path, monkeypatch
):
    run = tmp_path / "run.jsonl"
    rows = [_task("a<::>1", ["First?"]), _task("b<::>2", ["Which fit?", "LM.", "Its start?"]),
            _task("c<::>2", ["Q?", "A.", "More?"], "UNANSWERABLE")]  # fmt: skip
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen = []

    def fake_kept(index, queries, question, context):
        seen.append(list(queries))
        ids = ["x", "gold"] if len(queries) == 2 else ["gold", "x"]
        return ids, [{"document_id": i} for i in ids]

    monkeypatch.setattr(ptq, "kept_ids", fake_kept)
    monkeypatch.setattr(ptq, "index_for", lambda index_dir, collection: None)
    result = ptq.replay(ptq.mtrag_items(run), "idx", ptq.Context())
    assert seen == [["Its start?", "Its start? (rewritten)"],
                    ["Its start?", "Its start? (rewritten)", "Which fit? Its start?"]]  # fmt: skip
    before, after = (result["ways"][way] for way in ptq.WAYS)
    assert before == {"follow-ups": 1, "kept": 1, "top 3": 1, "rr": 0.5}
    assert after == {"follow-ups": 1, "kept": 1, "top 3": 1, "rr": 1.0}
    assert result["changed"] == 1 and result["differs_from_recorded"] == 0
    assert "| and the turn before | 1 | 1 | 1 | 1.000 |" in ptq.table(result, 5)
