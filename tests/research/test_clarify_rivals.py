"""research/data/clarify_rivals.jsonl: every pair's source is an MTRAG reference task whose last agent
turn names several things of the pair's kind, and the shipped decision tells the two questions apart on
the pairs it catches."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mtrag_graph.judging.underspecified import rival_reference
from research.clarify_rivals import SET

DATA = Path(os.environ.get("MTRAG_DATA", Path(__file__).resolve().parents[3] / "shared" / "data" / "mtrag"))


def test_the_pairs_are_well_formed():
    rows = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
    assert len(rows) == 15
    for row in rows:
        assert set(row) == {"source", "kind", "underspecified", "answerable"}
        assert (
            "<::>" in row["source"]
            and row["underspecified"].endswith("?")
            and row["answerable"].endswith("?")
        )


@pytest.mark.skipif(not (DATA / "tasks" / "mtrag_reference.jsonl").exists(), reason="no MTRAG data")
def test_no_answerable_twin_is_asked_and_most_caught_pairs_are_the_demonstrative_ones():
    tasks = {}
    for line in (DATA / "tasks" / "mtrag_reference.jsonl").read_text().splitlines():
        task = json.loads(line)
        tasks[task["task_id"]] = task
    rows = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
    caught = 0
    for row in rows:
        history = tasks[row["source"]]["input"][:-1]
        assert history[-1]["speaker"] == "agent"
        assert rival_reference(history, row["answerable"]) is None, row
        caught += rival_reference(history, row["underspecified"]) is not None
    assert caught == 5  # benchmarks/results/clarify.md
