"""Few-shot exemplars: one medoid training task per category, shortened, shipped as package data.

Categories: an empty-passages task (the answer must decline), a first turn with passages, and two
tasks with passages and history (a follow-up and a clarification turn). In each category the exemplar
is the medoid: the task whose embedding has the smallest total cosine distance to the others.
``mtrag-graph exemplars TASKS.jsonl -o mtrag_graph/data/exemplars.json`` recomputes the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.prompts.budget import cut
from mtrag_graph.tasks import answerability_of
from mtrag_graph.text import sentence_spans, words

# (category, description) in prompt order
CATEGORIES = (
    ("no_passages", "no documents: the answer declines"),
    ("first_turn", "first turn with documents"),
    ("history_follow_up", "documents and history: a follow-up question"),
    ("history_clarification", "documents and history: a clarification turn"),
)
PASSAGE_CHARS = 260
ANSWER_CHARS = 240
TURN_CHARS = 140


def medoid_index(vectors: np.ndarray) -> int:
    """Index of the row with the smallest total cosine distance to all rows (rows are normalised here)."""
    if len(vectors) == 0:
        raise ValueError("no vectors")
    rows = np.asarray(vectors, dtype=np.float64)
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    distances = 1.0 - rows @ rows.T
    return int(np.argmin(distances.sum(axis=1)))


def _label(task: dict[str, Any], key: str) -> str | None:
    value = task.get(key, task.get(key.lower()))
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


def category_of(task: dict[str, Any]) -> str | None:
    """The exemplar category of a training task, or None for tasks no category uses."""
    answerability = answerability_of(task)
    has_history = len(task.get("input") or []) > 1
    if not task.get("contexts"):
        return "no_passages" if answerability == "UNANSWERABLE" else None
    if answerability != "ANSWERABLE":
        return None
    if not has_history:
        return "first_turn"
    multi_turn = _label(task, "Multi-Turn")
    return {"Follow-up": "history_follow_up", "Clarification": "history_clarification"}.get(multi_turn or "")


def _target(task: dict[str, Any]) -> str:
    targets = task.get("targets") or []
    return str(targets[0].get("text", "")) if targets else ""


def embedding_text(task: dict[str, Any]) -> str:
    """What a task is compared by: its question and its reference answer."""
    return f"{task['input'][-1]['text']}\n{_target(task)}"


def _first_sentences(text: str, limit: int) -> str:
    """The text up to the last sentence end within ``limit`` (at least its first sentence), cut to ``limit``."""
    text = " ".join(text.split())
    ends = [end for _, end in sentence_spans(text)]
    fitting = [end for end in ends if end <= limit] or ends[:1]
    return cut(text[: fitting[-1]] if fitting else "", limit)


def _evidence(passages: Sequence[dict[str, Any]], answer: str, limit: int) -> str:
    """The passage sentence window that shares the most words with the answer, cut to ``limit``."""
    answer_words = set(words(answer))
    best, best_overlap = "", -1
    for passage in passages:
        text = " ".join(str(passage.get("text", "")).split())
        spans = sentence_spans(text)
        for i, (start, _) in enumerate(spans):
            window = text[start : spans[min(i + 1, len(spans) - 1)][1]]
            overlap = len(answer_words & set(words(window)))
            if overlap > best_overlap:
                best, best_overlap = window, overlap
    return cut(best, limit)


def shorten_exemplar(task: dict[str, Any], category: str) -> dict[str, Any]:
    """A short, self-contained exemplar: one evidence snippet, the last exchange, the question, the answer."""
    answer = _target(task)
    history = task["input"][:-1][-2:]
    passages = task.get("contexts") or []
    return {
        "category": category,
        "task_id": task.get("task_id"),
        "passage": _evidence(passages, answer, PASSAGE_CHARS) if passages else "",
        "history": [{"speaker": t["speaker"], "text": cut(t["text"], TURN_CHARS)} for t in history],
        "question": cut(task["input"][-1]["text"], TURN_CHARS),
        "answer": "" if category == "no_passages" else _first_sentences(answer, ANSWER_CHARS),
    }


def select_exemplars(
    tasks: Iterable[dict[str, Any]], embed: Callable[[list[str]], np.ndarray]
) -> list[dict[str, Any]]:
    """The medoid task of every category, shortened, in ``CATEGORIES`` order."""
    by_category: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in CATEGORIES}
    for task in tasks:
        category = category_of(task)
        if category is not None:
            by_category[category].append(task)
    chosen = []
    for name, _ in CATEGORIES:
        members = by_category[name]
        if not members:
            raise ValueError(f"no training task in category '{name}'")
        vectors = np.asarray(embed([embedding_text(t) for t in members]))
        chosen.append(shorten_exemplar(members[medoid_index(vectors)], name))
    return chosen


@lru_cache(maxsize=8)
def load_exemplars(path: str | None = None) -> tuple[dict[str, Any], ...]:
    """The exemplars of ``path``, or of the file shipped in the package."""
    if path:
        text = Path(path).read_text(encoding="utf-8")
    else:
        text = (resources.files("mtrag_graph") / "data" / "exemplars.json").read_text(encoding="utf-8")
    return tuple(json.loads(text)["exemplars"])
