"""Predictions to evaluate: submission-format rows (a task plus ``predictions[0].text``), joined with tasks.

Targets and answerability come from the prediction row itself or, when it lacks them, from the
``--tasks`` file row with the same task_id (``<::>`` and ``::`` separators are treated alike).
A malformed row is reported with its line / task_id and field, and skipped; a row without a valid
answerability label (``answerability`` or ``Answerability``) stops the evaluation (``LabelError``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mtrag_graph.tasks import ANSWERABILITY, TaskError, domain_of, parse_task, read_jsonl


class EvalItem(BaseModel):
    """One prediction to score, with everything the metrics read."""

    task_id: str
    line: int
    answerability: str
    domain: str | None
    history: list[tuple[str, str]]
    question: str
    passages: list[str]
    target: str
    response: str
    passage_ids: list[str] = []  # the passages' document ids, in the order of ``passages``
    citations: list[dict[str, Any]] | None = None  # ``predictions[0].citations``, when the file has them


class LabelError(TaskError):
    """A row without a valid answerability label: evaluation stops, since every conditioned metric (and
    HM3) of the file would depend on which rows happened to carry one."""


@dataclass(frozen=True)
class RowIssue:
    """A skipped row: where (task_id or ``line N``), which field, and why."""

    source: str
    line: int
    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: task {self.where}: field '{self.field}': {self.message}"


def join_key(task_id: str) -> str:
    return task_id.replace("<::>", "::")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == []


def load_tasks(path: str | Path) -> tuple[dict[str, dict], list[RowIssue]]:
    """Task rows by join key; rows without a task_id are reported."""
    rows: dict[str, dict] = {}
    issues: list[RowIssue] = []
    for line, obj, error in read_jsonl(path):
        if error or not isinstance(obj, dict) or not isinstance(obj.get("task_id"), str):
            issues.append(RowIssue(str(path), line, f"line {line}", "task_id", error or "missing task_id"))
            continue
        rows[join_key(obj["task_id"])] = obj
    return rows, issues


def _item(raw: dict, line: int) -> EvalItem:
    task = parse_task(raw, line)
    label = task.task_id
    predictions = raw.get("predictions")
    if not isinstance(predictions, list) or not predictions:
        raise TaskError(label, "predictions", 'missing: a non-empty list of {"text": ...} is required')
    first = predictions[0]
    if not isinstance(first, dict) or not isinstance(first.get("text"), str):
        raise TaskError(label, "predictions[0].text", "must be a string")
    if not task.targets:
        raise TaskError(label, "targets", "missing: a target answer is required (from the file or --tasks)")
    if task.answerability is None:
        raise LabelError(
            label,
            "answerability",
            "missing: neither 'answerability' nor 'Answerability' holds a label (in the row or the --tasks "
            "file); the IDK / clarification conditioning needs one",
        )
    if task.answerability not in ANSWERABILITY:
        raise LabelError(
            label, "answerability", f"must be one of {', '.join(ANSWERABILITY)}, got {task.answerability!r}"
        )
    return EvalItem(
        task_id=task.task_id,
        line=line,
        answerability=task.answerability,
        domain=domain_of(task.collection),
        history=[(t.speaker, t.text) for t in task.history],
        question=task.question,
        passages=[p["text"] for p in task.passages or []],
        target=task.targets[0],
        response=first["text"],
        passage_ids=[str(p["document_id"]) for p in task.passages or []],
        citations=first["citations"] if isinstance(first.get("citations"), list) else None,
    )


def load_items(
    predictions_path: str | Path, tasks_path: str | Path | None = None
) -> tuple[list[EvalItem], list[RowIssue]]:
    """Valid items in file order, and the issues of the rows that were skipped."""
    source = str(predictions_path)
    tasks, issues = load_tasks(tasks_path) if tasks_path else ({}, [])
    items: list[EvalItem] = []
    seen: set[str] = set()
    for line, obj, error in read_jsonl(predictions_path):
        if error:
            issues.append(RowIssue(source, line, f"line {line}", "<row>", error))
            continue
        if not isinstance(obj, dict):
            issues.append(RowIssue(source, line, f"line {line}", "<row>", "expected a JSON object"))
            continue
        task_id = obj.get("task_id")
        base = tasks.get(join_key(task_id), {}) if isinstance(task_id, str) else {}
        merged = {**base, **{k: v for k, v in obj.items() if not _missing(v)}}
        try:
            item = _item(merged, line)
        except LabelError as problem:
            raise LabelError(problem.task, problem.field, f"{problem.message} ({source}:{line})") from None
        except TaskError as problem:
            issues.append(RowIssue(source, line, problem.task, problem.field, problem.message))
            continue
        if join_key(item.task_id) in seen:
            issues.append(RowIssue(source, line, item.task_id, "task_id", "duplicate task_id: row skipped"))
            continue
        seen.add(join_key(item.task_id))
        items.append(item)
    return items, issues
