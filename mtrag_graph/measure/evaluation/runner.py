"""Scoring predictions task by task: per-task rows appended (and flushed) to ``scores.jsonl``, resumable."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mtrag_graph.citations import MIN_SUPPORT, grounding_sentences
from mtrag_graph.judging.grounding import sentence_support, unsupported_facts
from mtrag_graph.measure.evaluation.fitted import shipped_reference_rating
from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.measure.evaluation.judges import IDK_VALUES
from mtrag_graph.measure.evaluation.metrics import CONDITIONED, condition, rb_alg, rouge_l
from mtrag_graph.models.endpoints import endpoint_limit
from mtrag_graph.runtime.concurrency import run_bounded
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.text import decline_verdict, declines

METRICS = ("rouge", "bert", "rb_llm", "rl_f", "idk", "clarify", "faithfulness", "citations")
JUDGE_METRICS = frozenset({"rb_llm", "rl_f", "idk", "clarify"})
# how the IDK verdict is reached: the refusal recogniser of ``text.declines`` (no model call), the LLM
# judge, or the detector first and the judge only for what it calls partial
IDK_METHODS = ("pattern", "judge", "pattern+judge")
# who gives RB_llm and RL_F: the LLM judge, or the fitted models of ``evaluation.fitted`` (no model call;
# they need BERTScore recall and the answer judge's faithfulness, which are then computed too)
RATING_JUDGES = ("llm", "fitted")
FITTED_NEEDS = {"rb_llm": ("bert", "faithfulness"), "rl_f": ("faithfulness",)}
SCORES_FILE = "scores.jsonl"


def parse_metrics(text: str) -> tuple[str, ...]:
    """``rouge,bert,...`` (or ``all``) as a tuple in canonical order; raises ValueError on unknown names."""
    names = {n.strip().lower() for n in text.split(",") if n.strip()}
    if "all" in names:
        return METRICS
    unknown = names - set(METRICS)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; choose from {', '.join(METRICS)} or 'all'")
    if not names:
        raise ValueError("no metrics selected")
    return tuple(m for m in METRICS if m in names)


@dataclass
class Scorers:
    """What scores a task: the metrics wanted, a BERTScore encoder and a judge when they need one."""

    metrics: tuple[str, ...]
    bert: Any = None
    judge: Any = None
    answer_judge: Any = None
    idk_method: str = "judge"
    ratings: str = "llm"  # RATING_JUDGES
    reference_rating: Any = None  # evaluation.fitted.ReferenceRating, for ratings="fitted"
    provenance: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.idk_method not in IDK_METHODS:
            raise ValueError(f"unknown IDK method '{self.idk_method}': use one of {', '.join(IDK_METHODS)}")
        if self.ratings not in RATING_JUDGES:
            raise ValueError(f"unknown rating judges '{self.ratings}': use one of {', '.join(RATING_JUDGES)}")
        self.metrics = with_fitted_needs(self.metrics) if self.ratings == "fitted" else self.metrics
        if self.fitted_metrics and self.reference_rating is None:
            self.reference_rating = shipped_reference_rating()
        self.provenance = {
            "judge": self.judge.name if self.judge and self.llm_metrics else None,
            "ratings": self.reference_rating.name if self.fitted_metrics else None,
            "encoder": self.bert.name if self.bert and "bert" in self.metrics else None,
            "answer_judge": (
                self.answer_judge.name if self.answer_judge and "faithfulness" in self.metrics else None
            ),
            "idk_method": self.idk_method if "idk" in self.metrics else None,
        }

    @property
    def llm_metrics(self) -> set[str]:
        """The selected metrics that ask the LLM judge."""
        wanted = set(JUDGE_METRICS & set(self.metrics)) - self.fitted_metrics
        return wanted - {"idk"} if self.idk_method == "pattern" else wanted

    @property
    def fitted_metrics(self) -> set[str]:
        """The selected metrics given by the fitted models instead of the LLM judge."""
        return set(FITTED_NEEDS) & set(self.metrics) if self.ratings == "fitted" else set()


def with_fitted_needs(metrics: tuple[str, ...]) -> tuple[str, ...]:
    """``metrics`` plus what the fitted RB_llm / RL_F are computed from, in canonical order."""
    wanted = set(metrics)
    for name in set(FITTED_NEEDS) & set(metrics):
        wanted |= set(FITTED_NEEDS[name])
    return tuple(m for m in METRICS if m in wanted)


def idk_verdict(item: EvalItem, scorers: Scorers) -> dict[str, Any]:
    """The IDK verdict of one response by the configured method (``IDK_METHODS``)."""
    if scorers.idk_method != "judge":
        verdict = decline_verdict(item.response)
        if scorers.idk_method == "pattern" or verdict != "partial":
            return {"verdict": verdict, "value": IDK_VALUES[verdict], "by": "pattern"}
    return {**scorers.judge.idk(item.question, item.response), "by": "judge"}


def fabrication(item: EvalItem) -> float | None:
    """1.0 when an answering response holds a number, date, amount or name found in neither the passages
    nor the conversation, else 0.0; None for a response that declines (model-free, always computed)."""
    if declines(item.response):
        return None
    said = "\n".join([*(text for _, text in item.history), item.question])
    return 1.0 if unsupported_facts(item.response, item.passages, said) else 0.0


def _timed(seconds: dict[str, float], name: str, compute: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = compute()
    seconds[name] = round(time.perf_counter() - started, 4)
    return value


def score_item(item: EvalItem, scorers: Scorers) -> dict[str, Any]:
    """Every selected metric of one task, its conditioned values, per-metric seconds, and judge details."""
    metrics = scorers.metrics
    scores: dict[str, float | None] = {}
    seconds: dict[str, float] = {}
    details: dict[str, Any] = {}
    if "rouge" in metrics:
        scores["rouge_l"] = _timed(seconds, "rouge", lambda: rouge_l(item.response, item.target))
    if "bert" in metrics:
        bert = scorers.bert
        rec, kprec = _timed(
            seconds,
            "bert",
            lambda: (bert.recall(item.response, item.target), bert.k_precision(item.response, item.passages)),
        )
        scores["bert_rec"], scores["bert_kprec"] = rec, kprec
        if "rouge_l" in scores:
            scores["rb_alg"] = rb_alg(rec, scores["rouge_l"] or 0.0, kprec)
    scores["fabrication"] = fabrication(item)
    judge = scorers.judge
    if "idk" in metrics:
        verdict = _timed(seconds, "idk", lambda: idk_verdict(item, scorers))
        scores["idk"], details["idk"] = verdict["value"], verdict["verdict"]
    if "faithfulness" in metrics:
        answer = _timed(
            seconds,
            "faithfulness",
            lambda: scorers.answer_judge.score(item.question, item.passages, [item.response])[0],
        )
        scores["faithfulness"] = answer.faithfulness
    if "citations" in metrics:
        scores.update(_timed(seconds, "citations", lambda: citation_scores(item)))
    if "clarify" in metrics:
        verdict = _timed(seconds, "clarify", lambda: judge.clarify(item.question, item.response))
        scores["clarify"], details["clarify"] = verdict["value"], verdict["verdict"]
    fitted = scorers.fitted_metrics
    scores.update(fitted_scores(scores, scorers))
    if "rl_f" in metrics and "rl_f" not in fitted:
        # statements first (cached, timed apart): the verdicts after RB_llm then reuse its
        # documents prefix in llama.cpp instead of re-reading the passages
        _timed(seconds, "rl_f_statements", lambda: judge.statements(item.question, item.response))
    if "rb_llm" in metrics and "rb_llm" not in fitted:
        rating = _timed(
            seconds,
            "rb_llm",
            lambda: judge.rb_llm(item.passages, item.history, item.question, item.target, item.response),
        )
        scores["rb_llm"] = rating["score"]
        details["rb_llm"] = {"raw": rating["raw"], "parsed": rating["parsed"]}
    if "rl_f" in metrics and "rl_f" not in fitted:
        faithfulness = _timed(
            seconds, "rl_f", lambda: judge.rl_f(item.passages, item.question, item.response)
        )
        scores["rl_f"] = faithfulness["score"]
        details["rl_f"] = {"statements": faithfulness["statements"], "verdicts": faithfulness["verdicts"]}
    return {
        "task_id": item.task_id,
        "scored": scored_inputs(item),
        "answerability": item.answerability,
        "domain": item.domain,
        "metrics": list(metrics),
        **scorers.provenance,
        "scores": scores,
        "conditioned": conditioned(scores, item.answerability),
        "seconds": seconds,
        "details": details,
    }


def citation_scores(item: EvalItem) -> dict[str, float | None]:
    """How well a response's citations hold up against the grounding check's support measure.

    The citations are the prediction's own (``predictions[0].citations``, matched to the task's passages
    by document id) or, for a response without them, ``citations.grounding_sentences`` over the task's
    passages. ``citation_precision``: the share of (supported sentence, cited passage) pairs where that
    passage alone backs the sentence (``judging.grounding.sentence_support``: its facts found, enough of
    its content words); ``cited_share``: the share of the answer's claims that are supported and cite a
    passage. None where there is nothing to count.
    """
    by_id = dict(zip(item.passage_ids, item.passages, strict=False))
    if item.citations is None:
        ids = item.passage_ids or [str(i) for i in range(len(item.passages))]
        passages = [{"document_id": i, "text": t} for i, t in zip(ids, item.passages, strict=False)]
        by_id = {p["document_id"]: p["text"] for p in passages}
        rows = [r for r in grounding_sentences(item.response, passages) if r.get("claim", True)]
    else:
        rows = [r for r in item.citations if r.get("claim", True)]
    pairs = [
        all(s.supported for s in sentence_support(str(row["text"]), [by_id[doc]], "", MIN_SUPPORT))
        for row in rows
        if row.get("supported", True)
        for doc in row.get("document_ids") or []
        if doc in by_id
    ]
    cited = [bool(r.get("supported", True) and r.get("document_ids")) for r in rows]
    return {
        "citation_precision": sum(pairs) / len(pairs) if pairs else None,
        "cited_share": sum(cited) / len(cited) if cited else None,
    }


def conditioned(scores: dict[str, float | None], answerability: str) -> dict[str, float | None]:
    """Conditioned RB_alg / RB_llm / RL_F of one task (None where the raw value or a verdict is missing)."""
    result: dict[str, float | None] = {}
    for name in CONDITIONED:
        if name not in scores or "idk" not in scores:
            result[name] = None
            continue
        result[name] = condition(scores[name], answerability, scores["idk"], scores.get("clarify"))
    return result


def scored_inputs(item: EvalItem) -> str:
    """A hash of what a row's scores depend on (response, reference, question, passages, class): a stored
    row is reused only for the same inputs, so re-scoring an edited predictions file redoes its changes."""
    parts = [item.response, item.target, item.question, item.answerability, *item.passages]
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]


def _same_inputs(row: dict[str, Any], item: EvalItem) -> bool:
    # rows written before the hash was stored carry none and are taken as they are
    return row.get("scored") in (None, scored_inputs(item))


def fitted_scores(scores: dict[str, float | None], scorers: Scorers) -> dict[str, float | None]:
    """The fitted RB_llm / RL_F computed from a row's own BERTScore recall and faithfulness."""
    fitted: dict[str, float | None] = {}
    if "rb_llm" in scorers.fitted_metrics:
        fitted["rb_llm"] = scorers.reference_rating(scores)
    if "rl_f" in scorers.fitted_metrics:
        fitted["rl_f"] = scores.get("faithfulness")
    return fitted


def completed_with_fitted(row: dict[str, Any] | None, scorers: Scorers) -> dict[str, Any] | None:
    """A stored row that lacks only the fitted metrics, completed from its own scores (no recomputation);
    None when it lacks more, or was scored with another encoder, answer judge or IDK method."""
    fitted = scorers.fitted_metrics
    if row is None or not fitted or not set(scorers.metrics) - fitted <= set(row.get("metrics", [])):
        return None
    others = {k: v for k, v in scorers.provenance.items() if k not in ("ratings", "judge") and v is not None}
    if any(row.get(k) != v for k, v in others.items()):
        return None
    if scorers.llm_metrics and row.get("judge") != scorers.provenance["judge"]:
        return None
    scores = {**row["scores"], **fitted_scores(row["scores"], scorers)}
    return {
        **row,
        "metrics": sorted(set(row["metrics"]) | set(scorers.metrics), key=METRICS.index),
        **scorers.provenance,
        "scores": scores,
        "conditioned": conditioned(scores, row["answerability"]),
        "completed_from_stored": True,
    }


def reusable(row: dict[str, Any] | None, scorers: Scorers) -> bool:
    """A stored row serves when it has every selected metric, from the same judge and encoder."""
    if row is None or not set(scorers.metrics) <= set(row.get("metrics", [])):
        return False
    return all(row.get(k) == v for k, v in scorers.provenance.items() if v is not None)


def score_items(
    items: Iterable[EvalItem],
    scorers: Scorers,
    out_dir: Path,
    progress: bool = True,
    concurrency: int = 1,
) -> list[dict[str, Any]]:
    """Score every item (reusing rows already in ``out_dir``), appending new rows as they finish.

    ``concurrency`` tasks are scored at once (their judge calls overlap against a remote judge; a
    local llama.cpp judge still takes one call at a time). Rows come back in the items' order.
    """
    items = list(items)
    out_dir.mkdir(parents=True, exist_ok=True)
    # the last stored row of a task wins; a line torn by an interrupted run is cut off and redone
    writer, done = open_resumable(out_dir / SCORES_FILE, _task_key)
    rows: dict[int, dict[str, Any]] = {}
    completions: dict[int, dict[str, Any]] = {}  # stored rows that only lacked the fitted ratings
    todo = []
    for index, item in enumerate(items):
        stored = done.get(item.task_id)
        if stored is not None and not _same_inputs(stored, item):
            stored = None
        if stored is not None and "fabrication" not in stored.get("scores", {}):
            # rows stored before the measure existed: add it (model-free), keep the rest
            stored = {**stored, "scores": {**stored["scores"], "fabrication": fabrication(item)}}
        if stored is not None and reusable(stored, scorers):
            rows[index] = {**stored, "reused": True}
        elif (completed := completed_with_fitted(stored, scorers)) is not None:
            completions[index] = completed
        else:
            todo.append(index)
    bar = tqdm(total=len(items), initial=len(rows), desc="evaluating", unit="task", disable=not progress)
    with writer, bar, endpoint_limit(concurrency):
        for index, row in completions.items():
            writer.write(row)
            rows[index] = {**row, "reused": True}  # its seconds are the stored row's
            bar.update()
        # only this thread writes: each row is one whole, fsynced line
        for index, row in run_bounded(lambda i: score_item(items[i], scorers), todo, concurrency):
            writer.write(row)
            rows[index] = row
            bar.update()
    return [rows[index] for index in range(len(items))]


def _task_key(row: dict[str, Any]) -> str | None:
    return row["task_id"] if isinstance(row.get("task_id"), str) else None
