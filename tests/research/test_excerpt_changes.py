"""research.excerpt_changes: the recorded tasks the excerpt options touch, and splicing their answers."""

from __future__ import annotations

import json

import pytest

from research import excerpt_changes

FAQ = "How many copies can I keep in other regions? You can copy a snapshot to another region."
FILLER = " ".join(f"Cloud type {i} brings rain in spring." for i in range(40))


def _record(task_id, question, passages):
    contexts = [{"document_id": f"d{i}", "text": t} for i, t in enumerate(passages)]
    return {"task_id": task_id, "status": "ok", "input": [{"speaker": "user", "text": question}],
            "contexts": contexts, "route": {"standalone_question": question,
                                            "kept_passages": [{"document_id": c["document_id"]} for c in contexts]}}  # fmt: skip


def _run(tmp_path):
    records = [
        _record("dup<::>1", "How many copies can I keep in other regions?",
                [f"Backups run hourly. {FAQ}", f"{FAQ} Only one copy can exist in each region.", FILLER]),
        _record("plain<::>1", "Which cloud brings rain?", ["Cloud type 3 brings rain.", FILLER]),
    ]  # fmt: skip
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_only_the_task_with_a_sentence_shown_twice_changes_under_shown_once(tmp_path, capsys):
    run = _run(tmp_path)
    assert excerpt_changes.main(["changed", str(run), "--shown-once", "--embedder", "hashing:64"]) == 0
    assert capsys.readouterr().out.split() == ["dup<::>1"]


def test_no_option_changes_nothing(tmp_path, capsys):
    assert excerpt_changes.main(["changed", str(_run(tmp_path)), "--embedder", "hashing:64"]) == 0
    assert capsys.readouterr().out.split() == []


def test_splice_replaces_by_task_and_refuses_a_task_the_base_lacks(tmp_path):
    base = [{"task_id": "a", "x": 1}, {"task_id": "b", "x": 1}]
    assert excerpt_changes.splice(base, [{"task_id": "b", "x": 2}]) == [
        {"task_id": "a", "x": 1},
        {"task_id": "b", "x": 2},
    ]
    with pytest.raises(ValueError, match="not in the base run"):
        excerpt_changes.splice(base, [{"task_id": "c", "x": 2}])
