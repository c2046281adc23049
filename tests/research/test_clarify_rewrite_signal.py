"""research/clarify_rewrite_signal.py: which turns it rewrites (later turns of the tuning split without
passages), and how it labels them."""

from __future__ import annotations

import json

from research.clarify_rewrite_signal import generated_rows


def _item(task_id, turns, *, split="tuning", form="reference", underspecified=True, passages=False):
    speakers = ["user", "agent"] * len(turns)
    return {
        "task_id": task_id,
        "input": [{"speaker": s, "text": t} for s, t in zip(speakers, turns, strict=False)],
        "contexts": [{"document_id": "d", "title": "T", "text": "Some text."}] if passages else [],
        "clarify_item": {
            "split": split,
            "form": form,
            "underspecified": underspecified,
            "passages": passages,
        },
    }


def test_only_later_tuning_turns_without_passages_are_taken(tmp_path):
    later = ["What is a Roth IRA?", "A retirement account.", "How big is it?"]
    items = [
        _item("u", later),
        _item("a", later, underspecified=False),
        _item("n", later, form="natural", underspecified=False),
        _item("first", ["How big is it?"]),  # nothing to rewrite it from
        _item("with", later, passages=True),
        _item("held", later, split="held-out"),
        _item("docs", later, form="documents", underspecified=False),
    ]
    path = tmp_path / "generated.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    rows = generated_rows(path, per_class=5, seed=0)
    assert sorted((label, item["task_id"]) for label, item in rows) == [
        ("answerable twin", "a"),
        ("natural without passages", "n"),
        ("underspecified twin", "u"),
    ]
