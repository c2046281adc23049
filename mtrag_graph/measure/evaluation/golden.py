"""The golden file with human ratings (``eval/reference_subset_with_human_evaluations.json``) as responses.

Each of its evaluations becomes a ``GoldenResponse``: the task as an ``EvalItem`` (passages resolved from
the file's ``documents``), the mean human rating of each dimension over the annotators, and the official
metric values. The tuning / report split is kept here, by conversation: a task whose conversation id
(the part of its task_id before ``<::>``) has an even sha256 is for tuning, odd for reporting. All the
turns of a conversation (and so the passages they share) fall in one half: an earlier split by
sha256(task_id) put turns of 19 of the 20 conversations in both halves.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.tasks import ANSWERABILITY, TaskError, domain_of, parse_task

HUMAN_DIMENSIONS = ("faithfulness", "completeness", "appropriateness", "naturalness", "win-rate")
OFFICIAL_METRICS = ("RougeL", "Bert-Rec", "Bert-KPrec", "rb_llm", "rl_f", "rb_agg", "conditional_idk")
IDK_CLASSES = ("UNANSWERABLE", "CONVERSATIONAL")
Split = Literal["tune", "report"]


SPLIT_RULE = (
    "by conversation: tune when sha256(conversation id, the task_id before '<::>') is even, else report "
    "(mtrag_graph.measure.evaluation.golden.split_of)"
)


def conversation_of(task_id: str) -> str:
    """The conversation id: the part of ``task_id`` before ``<::>`` (the whole id when it has none)."""
    return task_id.split("<::>", 1)[0]


def split_of(task_id: str) -> Split:
    """``tune`` when sha256 of the task's conversation id is even, else ``report``."""
    digest = hashlib.sha256(conversation_of(task_id).encode("utf-8")).hexdigest()
    return "tune" if int(digest, 16) % 2 == 0 else "report"


@dataclass(frozen=True)
class GoldenResponse:
    """One system's response to one golden task, with what people and the official metrics said of it."""

    item: EvalItem  # task_id is "<task_id>/<model_id>" so that every response has its own key
    task_id: str
    model_id: str
    human: dict[str, float]
    official: dict[str, float]

    @property
    def key(self) -> str:
        return self.item.task_id

    @property
    def split(self) -> Split:
        return split_of(self.task_id)

    @property
    def official_idk(self) -> int:
        """The IDK verdict implied by ``conditional_idk`` (1 = the IDK behaviour was right for the class)."""
        right = int(self.official["conditional_idk"])
        return right if self.item.answerability in IDK_CLASSES else 1 - right


def _value(annotation: dict[str, Any], where: str) -> float:
    values = [entry.get("value") for entry in annotation.values() if isinstance(entry, dict)]
    try:
        numbers = [float(v) for v in values if v is not None]
    except (TypeError, ValueError) as error:
        raise TaskError(where.split(":")[0], where.split(":")[1], f"not a number: {error}") from None
    if not numbers:
        raise TaskError(where.split(":")[0], where.split(":")[1], "no annotator value")
    return statistics.mean(numbers)


def _label(task) -> str:
    """The task's answerability label; a missing one is an error (the IDK conditioning depends on it)."""
    if task.answerability not in ANSWERABILITY:
        raise TaskError(
            task.task_id,
            "answerability",
            f"missing or unknown ({task.answerability!r}): neither 'answerability' nor 'Answerability' "
            f"holds one of {', '.join(ANSWERABILITY)}",
        )
    return task.answerability


def load_golden(path: str | Path) -> list[GoldenResponse]:
    """Every evaluation of the golden file, in file order; a malformed one raises ``TaskError``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    for name in ("tasks", "documents", "evaluations"):
        if not isinstance(data.get(name), list):
            raise TaskError(
                str(path), name, "missing: the golden file needs tasks, documents and evaluations"
            )
    documents = {d["document_id"]: d for d in data["documents"]}
    tasks: dict[str, Any] = {}
    for raw in data["tasks"]:
        contexts = []
        for i, ctx in enumerate(raw.get("contexts") or []):
            doc = documents.get(ctx.get("document_id"))
            if doc is None:
                raise TaskError(raw.get("task_id", "?"), f"contexts[{i}].document_id", "not in documents")
            contexts.append({**ctx, "text": doc["text"], "title": doc.get("title", "")})
        tasks[raw["task_id"]] = parse_task({**raw, "contexts": contexts})
    responses = []
    for n, evaluation in enumerate(data["evaluations"]):
        task = tasks.get(evaluation.get("task_id"))
        if task is None:
            raise TaskError(f"evaluations[{n}]", "task_id", f"unknown task {evaluation.get('task_id')!r}")
        model_id = str(evaluation.get("model_id"))
        key = f"{task.task_id}/{model_id}"
        annotations = evaluation.get("annotations") or {}
        missing = [m for m in HUMAN_DIMENSIONS + OFFICIAL_METRICS if m not in annotations]
        if missing:
            raise TaskError(key, "annotations", f"missing {', '.join(missing)}")
        if not isinstance(evaluation.get("model_response"), str):
            raise TaskError(key, "model_response", "must be a string")
        responses.append(
            GoldenResponse(
                item=EvalItem(
                    task_id=key,
                    line=n + 1,
                    answerability=_label(task),
                    domain=domain_of(task.collection),
                    history=[(t.speaker, t.text) for t in task.history],
                    question=task.question,
                    passages=[p["text"] for p in task.passages or []],
                    passage_ids=[p["document_id"] for p in task.passages or []],
                    target=task.targets[0] if task.targets else "",
                    response=evaluation["model_response"],
                ),
                task_id=task.task_id,
                model_id=model_id,
                human={d: _value(annotations[d], f"{key}:{d}") for d in HUMAN_DIMENSIONS},
                official={m: _value(annotations[m], f"{key}:{m}") for m in OFFICIAL_METRICS},
            )
        )
    return responses


def by_task(responses: list[GoldenResponse]) -> dict[str, list[GoldenResponse]]:
    """Responses grouped by task, in file order."""
    groups: dict[str, list[GoldenResponse]] = {}
    for response in responses:
        groups.setdefault(response.task_id, []).append(response)
    return groups
