"""Fixtures of the evaluation tests: the golden file's rows (located with tests/conftest.py's policy)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import mtrag_data_path

GOLDEN = "eval/reference_subset_with_human_evaluations.json"


@pytest.fixture(scope="session")
def golden_rows() -> list[dict]:
    """One row per (task, system) of the golden file: answerability, passages, target, response, values."""
    data = json.loads(mtrag_data_path(GOLDEN).read_text(encoding="utf-8"))
    tasks = {t["task_id"]: t for t in data["tasks"]}
    rows = []
    for evaluation in data["evaluations"]:
        task = tasks[evaluation["task_id"]]
        values = {name: next(iter(ann.values()))["value"] for name, ann in evaluation["annotations"].items()}
        rows.append(
            {
                "id": f"{evaluation['task_id']}/{evaluation['model_id']}",
                "answerability": task["Answerability"][0],
                "n_passages": len(task["contexts"]),
                "target": task["targets"][0]["text"],
                "response": evaluation["model_response"],
                "values": values,
            }
        )
    return rows
