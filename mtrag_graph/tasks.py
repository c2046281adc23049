"""MTRAG task input: parsing and validation at the boundary, with errors that name task and field."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from mtrag_graph.passages import Passage, passage

ANSWERABILITY = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL", "UNDERSPECIFIED")
DOMAINS = {"clapnq": "clapnq", "cloud": "cloud", "ibmcloud": "cloud", "fiqa": "fiqa", "govt": "govt"}


class TaskError(ValueError):
    """A task that cannot be run: ``task`` is its task_id (or ``line N``), ``field`` the offending field."""

    def __init__(self, task: str, field: str, message: str):
        self.task, self.field, self.message = task, field, message
        super().__init__(f"task {task}: field '{field}': {message}")


class Turn(BaseModel):
    speaker: Literal["user", "agent"]
    text: str


class Task(BaseModel):
    """A validated task: the conversation before the question, the question, and the passages."""

    task_id: str
    history: list[Turn]
    question: str
    passages: list[Passage] | None = Field(description="None when the task has no `contexts` (full-RAG mode)")
    collection: str | None = None
    answerability: str | None = None
    targets: list[str] = []


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def domain_of(collection: str | None) -> str | None:
    """Map a collection name (``mt-rag-ibmcloud-elser-...``, ``cloud``, ...) to its domain."""
    if not collection:
        return None
    lowered = collection.lower()
    for key, domain in DOMAINS.items():
        if (
            lowered == key
            or f"-{key}-" in lowered
            or lowered.startswith(f"{key}-")
            or lowered.endswith(f"-{key}")
        ):
            return domain
    return None


def answerability_of(raw: dict[str, Any]) -> str | None:
    """The task's answerability label, from ``answerability`` or ``Answerability`` (a list or a string).

    Both spellings are read (upstream's scorer once skipped the IDK conditioning when the key was
    capitalised, as in some of the organisers' files); an empty or null one does not hide the other.
    """
    for key in ("answerability", "Answerability"):
        value = raw.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, str) and value.strip():
            return value
    return None


def task_label(raw: Any, line: int | None = None) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("task_id"), str) and raw["task_id"].strip():
        return raw["task_id"]
    return f"line {line}" if line is not None else "<unknown>"


def parse_task(raw: Any, line: int | None = None) -> Task:
    """Validate one task dict; raises ``TaskError`` naming the task and the field."""
    label = task_label(raw, line)
    if not isinstance(raw, dict):
        raise TaskError(label, "<task>", f"expected a JSON object, got {type(raw).__name__}")
    task_id = raw.get("task_id")
    if _is_missing(task_id):
        task_id = label
    elif not isinstance(task_id, str) or not task_id.strip():
        raise TaskError(label, "task_id", "must be a non-empty string")
    turns = raw.get("input")
    if _is_missing(turns):
        raise TaskError(label, "input", "missing: the conversation (a list of turns) is required")
    if not isinstance(turns, list) or not turns:
        raise TaskError(label, "input", "must be a non-empty list of turns")
    parsed: list[Turn] = []
    for i, turn in enumerate(turns):
        where = f"input[{i}]"
        if not isinstance(turn, dict):
            raise TaskError(
                label, where, f"expected an object with speaker and text, got {type(turn).__name__}"
            )
        speaker, text = turn.get("speaker"), turn.get("text")
        if speaker not in ("user", "agent"):
            raise TaskError(label, f"{where}.speaker", f"must be 'user' or 'agent', got {speaker!r}")
        if not isinstance(text, str):
            raise TaskError(label, f"{where}.text", f"must be a string, got {type(text).__name__}")
        parsed.append(Turn(speaker=speaker, text=text))
    if parsed[-1].speaker != "user":
        raise TaskError(
            label, f"input[{len(parsed) - 1}].speaker", "the last turn must be the user's question"
        )
    if not parsed[-1].text.strip():
        raise TaskError(label, f"input[{len(parsed) - 1}].text", "the user's question is empty")
    passages: list[Passage] | None = None
    if "contexts" in raw and not _is_missing(raw["contexts"]):
        contexts = raw["contexts"]
        if not isinstance(contexts, list):
            raise TaskError(label, "contexts", f"must be a list of passages, got {type(contexts).__name__}")
        passages = []
        for i, ctx in enumerate(contexts):
            where = f"contexts[{i}]"
            if not isinstance(ctx, dict):
                raise TaskError(label, where, f"expected an object with text, got {type(ctx).__name__}")
            text = ctx.get("text")
            if not isinstance(text, str):
                raise TaskError(label, f"{where}.text", f"must be a string, got {type(text).__name__}")
            passages.append(passage(ctx, i))
    targets = raw.get("targets")
    target_texts = (
        [t["text"] for t in targets if isinstance(t, dict) and isinstance(t.get("text"), str)]
        if isinstance(targets, list)
        else []
    )
    collection = raw.get("Collection", raw.get("collection"))
    return Task(
        task_id=task_id,
        history=parsed[:-1],
        question=parsed[-1].text.strip(),
        passages=passages,
        collection=collection if isinstance(collection, str) else None,
        answerability=answerability_of(raw),
        targets=target_texts,
    )


def read_jsonl(path: str | Path) -> Iterator[tuple[int, Any | None, str | None]]:
    """Yield ``(line_number, object, error)`` for each non-blank line; a bad line yields an error."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line), None
            except json.JSONDecodeError as error:
                yield number, None, f"not valid JSON ({error.msg} at column {error.colno})"


def user_and_agent_pairs(history: Sequence[dict[str, str]]) -> list[tuple[str, str]]:
    """The conversation as (user question, agent answer) pairs, oldest first."""
    pairs: list[tuple[str, str]] = []
    question: str | None = None
    for turn in history:
        if turn["speaker"] == "user":
            if question is not None:
                pairs.append((question, ""))
            question = turn["text"]
        elif question is not None:
            pairs.append((question, turn["text"]))
            question = None
        elif pairs:  # consecutive agent turns: join them to the last answer
            pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]}\n{turn['text']}".strip())
    if question is not None:
        pairs.append((question, ""))
    return pairs


def pairs_to_turns(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for question, answer in pairs:
        turns.append({"speaker": "user", "text": question})
        if answer:
            turns.append({"speaker": "agent", "text": answer})
    return turns
