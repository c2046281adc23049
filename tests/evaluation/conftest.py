"""Locating the shared MTRAG data: ``MTRAG_DATA`` or ``<repo>/../shared/data/mtrag``.

A missing file fails the test when ``MTRAG_DATA`` was set explicitly (CI), and skips it otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN = "eval/reference_subset_with_human_evaluations.json"


def mtrag_data_file(relative: str) -> Path:
    explicit = os.environ.get("MTRAG_DATA")
    root = Path(explicit) if explicit else REPO_ROOT.parent / "shared" / "data" / "mtrag"
    path = root / relative
    if not path.is_file():
        if explicit:
            pytest.fail(f"MTRAG_DATA={explicit} is set but {path} does not exist")
        pytest.skip(f"benchmark data file {path} not found (set MTRAG_DATA to the shared/data/mtrag folder)")
    return path


@pytest.fixture(scope="session")
def golden_rows() -> list[dict]:
    """One row per (task, system) of the golden file: answerability, passages, target, response, values."""
    data = json.loads(mtrag_data_file(GOLDEN).read_text(encoding="utf-8"))
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
