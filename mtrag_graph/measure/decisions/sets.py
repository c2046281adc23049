"""Labelled sets for each decision node, built from the benchmark files, and the split they come from.

The split is fixed here: thresholds and learned parameters are fitted on ``tuning`` (MTRAG reference,
842 tasks) only; numbers are reported on ``report`` (the MTRAG-UN dev slice, 116 tasks).

- **Gate / decline.** Positives: ANSWERABLE and PARTIAL turns with their reference passages.
  Negatives: UNANSWERABLE turns with the passages the project's own retrieval returns for them
  (``unanswerable_retrieved``), and answerable turns given the passages of another conversation of the
  same domain (``other_conversation``).
- **Clarify.** UNDERSPECIFIED turns (positives) against ANSWERABLE and PARTIAL turns.
- **Relation.** Every turn after the first; MTRAG's ``Multi-Turn`` label rides along (``N/A`` marks a
  stand-alone turn, where the classifier should say "new topic").
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.tasks import answerability_of, domain_of, parse_task, read_jsonl

SPLITS = {"tuning": "tasks/mtrag_reference.jsonl", "report": "tasks/mtragun_dev.jsonl"}
ANSWERED = ("ANSWERABLE", "PARTIAL")
GATE_KINDS = ("positive", "unanswerable_retrieved", "other_conversation")

# passages for a task: the project's retrieval for an UNANSWERABLE turn (see decisions/retrieval.py)
Retriever = Callable[[dict[str, Any]], list[dict[str, Any]]]


def split_path(data_dir: str | Path, split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown split '{split}': use one of {', '.join(SPLITS)}")
    return Path(data_dir) / SPLITS[split]


def load_split(data_dir: str | Path, split: str) -> list[dict[str, Any]]:
    """The split's raw task dicts; a line that is not valid JSON raises, naming the file and line."""
    return load_tasks(split_path(data_dir, split))


def load_tasks(path: str | Path) -> list[dict[str, Any]]:
    """A task file's raw task dicts, validated; a bad line raises, naming the file and line."""
    path = Path(path)
    tasks: list[dict[str, Any]] = []
    for line, raw, error in read_jsonl(path):
        if error is not None or not isinstance(raw, dict):
            raise ValueError(f"{path}: line {line}: {error or 'not a JSON object'}")
        parse_task(raw, line)  # validates; raises TaskError naming task and field
        tasks.append(raw)
    return tasks


def _conversation(raw: dict[str, Any]) -> str:
    return str(raw.get("conversation_id") or raw["task_id"].split("<::>")[0])


def _base(raw: dict[str, Any]) -> dict[str, Any]:
    task = parse_task(raw)
    return {
        "task_id": task.task_id,
        "conversation_id": _conversation(raw),
        "domain": domain_of(task.collection) or "unknown",
        "answerability": task.answerability,
        "history": [turn.model_dump() for turn in task.history],
        "question": task.question,
        "passages": None
        if task.passages is None
        else [{k: p[k] for k in ("document_id", "title", "text")} for p in task.passages],
    }


def _sample(items: Sequence[dict[str, Any]], limit: int | None, seed: int) -> list[dict[str, Any]]:
    """At most ``limit`` items, a deterministic random sample kept in input order."""
    if limit is None or len(items) <= limit:
        return list(items)
    keep = set(random.Random(seed).sample(range(len(items)), limit))
    return [item for i, item in enumerate(items) if i in keep]


def gate_items(
    tasks: Iterable[dict[str, Any]],
    retriever: Retriever | None,
    *,
    other_conversation: int | None = None,
    limit_per_kind: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Labelled (question, passages) items for the answerability gate and the generator's decline.

    ``other_conversation``: how many answerable turns get another conversation's passages (default:
    as many as there are UNANSWERABLE turns). ``limit_per_kind`` subsamples each kind (CPU budget).
    ``retriever`` may be None only when the tasks hold no UNANSWERABLE turn.
    """
    tasks = list(tasks)
    positives, unanswerable = [], []
    for raw in tasks:
        label = answerability_of(raw)
        if label in ANSWERED and raw.get("contexts"):
            positives.append(_base(raw))
        elif label == "UNANSWERABLE":
            unanswerable.append(_base(raw))
    items = [
        {**p, "item_id": f"positive:{p['task_id']}", "kind": "positive", "label": True} for p in positives
    ]
    if unanswerable and retriever is None:
        raise ValueError("UNANSWERABLE turns need a retriever (an index of the corpora) for their passages")
    for base in _sample(unanswerable, limit_per_kind, seed):
        source = next(raw for raw in tasks if raw["task_id"] == base["task_id"])
        passages = retriever(source) if retriever is not None else []
        items.append(
            {
                **base,
                "passages": passages,
                "item_id": f"unanswerable_retrieved:{base['task_id']}",
                "kind": "unanswerable_retrieved",
                "label": False,
            }  # fmt: skip
        )
    count = len(unanswerable) if other_conversation is None else other_conversation
    if limit_per_kind is not None:
        count = min(count, limit_per_kind)
    items.extend(_other_conversation_items(positives, count, seed))
    if limit_per_kind is not None:
        kept = _sample([i for i in items if i["kind"] == "positive"], limit_per_kind, seed)
        items = kept + [i for i in items if i["kind"] != "positive"]
    return items


def _other_conversation_items(
    positives: Sequence[dict[str, Any]], count: int, seed: int
) -> list[dict[str, Any]]:
    """``count`` answerable turns, each given the passages of a turn of another same-domain conversation."""
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in positives:
        by_domain[item["domain"]].append(item)
    rng = random.Random(seed + 1)
    chosen = _sample(positives, count, seed + 2)
    items = []
    for item in chosen:
        donors = [d for d in by_domain[item["domain"]] if d["conversation_id"] != item["conversation_id"]]
        if not donors:
            continue
        donor = rng.choice(donors)
        items.append(
            {
                **item,
                "passages": donor["passages"],
                "donor_task_id": donor["task_id"],
                "item_id": f"other_conversation:{item['task_id']}",
                "kind": "other_conversation",
                "label": False,
            }  # fmt: skip
        )
    return items


def clarify_items(tasks: Iterable[dict[str, Any]], *, limit_per_class: int | None = None, seed: int = 0):
    """UNDERSPECIFIED turns (label True) against ANSWERABLE and PARTIAL turns (label False)."""
    by_class: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for raw in tasks:
        label = answerability_of(raw)
        if label == "UNDERSPECIFIED" or label in ANSWERED:
            base = _base(raw)
            by_class[str(label)].append(
                {**base, "item_id": f"clarify:{base['task_id']}", "label": label == "UNDERSPECIFIED"}
            )
    items: list[dict[str, Any]] = []
    for label in sorted(by_class):
        items.extend(_sample(by_class[label], limit_per_class, seed))
    return items


def relation_items(tasks: Iterable[dict[str, Any]], *, limit_per_label: int | None = None, seed: int = 0):
    """Every turn with a previous exchange, with MTRAG's ``Multi-Turn`` label (``N/A``: stand-alone).

    ``limit_per_label`` subsamples each label, so the few stand-alone turns are all kept."""
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for raw in tasks:
        base = _base(raw)
        if not base["history"]:
            continue
        multi_turn = raw.get("Multi-Turn")
        label = multi_turn[0] if isinstance(multi_turn, list) and multi_turn else multi_turn
        by_label[str(label)].append(
            {**base, "item_id": f"relation:{base['task_id']}", "multi_turn": label or None}
        )
    items: list[dict[str, Any]] = []
    for label in sorted(by_label):
        items.extend(_sample(by_label[label], limit_per_label, seed))
    return items
