"""Answer a file of tasks (batch mode) with the graph: incremental, resumable output and a run summary."""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.models.endpoints import endpoint_limit
from mtrag_graph.models.factory import ModelSpec, model_name, spec_capabilities
from mtrag_graph.passages import as_context
from mtrag_graph.runtime.bookkeeping import route_of
from mtrag_graph.runtime.concurrency import run_bounded
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.runtime.streaming import run_streamed
from mtrag_graph.stages import STAGES, model_settings
from mtrag_graph.tasks import TaskError, answerability_of, read_jsonl, task_label


@dataclass
class RunSummary:
    tasks: int = 0
    answered: int = 0
    resumed: int = 0
    failed: int = 0
    seconds: list[float] = field(default_factory=list)
    abstentions: Counter = field(default_factory=Counter)
    by_answerability: dict[str, Counter] = field(default_factory=dict)
    node_seconds: Counter = field(default_factory=Counter)
    concurrency: int = 1
    wall_seconds: float = 0.0
    endpoints: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, record: dict[str, Any], seconds: float) -> None:
        self.answered += 1
        self.seconds.append(seconds)
        route = record.get("route") or {}
        reason = route.get("abstain_reason")
        if reason:
            self.abstentions[reason] += 1
        label = answerability_of(record) or "unknown"
        self.by_answerability.setdefault(label, Counter())[reason or "answered"] += 1
        for node, value in (route.get("node_seconds") or {}).items():
            self.node_seconds[node] += value

    def render(self) -> str:
        lines = [
            f"tasks: {self.tasks}  answered now: {self.answered}  resumed (already done): {self.resumed}  "
            f"failed: {self.failed}"
        ]
        if self.seconds:
            lines.append(
                f"seconds per task: mean {statistics.mean(self.seconds):.1f}  max {max(self.seconds):.1f}"
            )
        lines.extend(self._throughput_lines())
        if self.abstentions:
            lines.append("abstentions: " + ", ".join(f"{k} {v}" for k, v in self.abstentions.most_common()))
        if self.by_answerability:
            lines.append("outcome by answerability class:")
            for label, counts in sorted(self.by_answerability.items()):
                lines.append(f"  {label:<15} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if self.node_seconds and self.seconds:
            total = sum(self.seconds)
            lines.append("time by node (share of task time):")
            for node, value in self.node_seconds.most_common():
                lines.append(f"  {node:<20} {value:8.1f} s  {100 * value / total:5.1f}%")
        return "\n".join(lines)

    def _throughput_lines(self) -> list[str]:
        """Tasks per second at the run's concurrency, requests in flight per endpoint, notes."""
        lines = []
        if self.answered and self.wall_seconds > 0:
            lines.append(
                f"concurrency {self.concurrency}: {self.answered} tasks in {self.wall_seconds:.1f} s "
                f"wall, {self.answered / self.wall_seconds:.2f} tasks/s"
            )
        for url, (limit, peak, requests) in sorted(self.endpoints.items()):
            if requests:
                lines.append(f"endpoint {url}: {requests} requests, at most {peak} in flight (limit {limit})")
        lines.extend(f"note: {note}" for note in self.notes)
        return lines


def models_of(context: Context) -> list[ModelSpec]:
    """The model specs a graph run with ``context`` calls: every stage's model settings
    (``stages.model_settings``), less clarify's when it is off, plus the candidates' when ensembling
    (and less the candidate judge's when not)."""
    ensembling = len(context.candidates) >= 2
    off = {"clarify"} if not context.clarify else set()
    if not ensembling:
        off.add("candidates")
    specs: list[ModelSpec] = [
        getattr(context, name) for name in model_settings(type(context), *(s for s in STAGES if s not in off))
    ]
    if ensembling:
        specs += [c.model for c in context.candidates]
    return specs


def default_endpoint_limit(context: Context, concurrency: int) -> int:
    """One request in flight per task, times the candidates an ensemble sends at once."""
    return concurrency * max(1, len(context.candidates))


def local_models_note(specs: list[ModelSpec], concurrency: int) -> str | None:
    """The summary line saying that local llama.cpp models serialise their calls, when any are used."""
    local = sorted({model_name(s) for s in specs if spec_capabilities(s).serialised})
    if concurrency <= 1 or not local:
        return None
    return (
        f"local llama.cpp models run one call at a time per model ({', '.join(local)}): their calls queue "
        f"behind each other at concurrency {concurrency}, and tasks interleaving on one model lose the "
        "prompt-prefix reuse between a task's gate and generate calls"
    )


def _task_key(record: dict[str, Any]) -> str | None:
    return record.get("task_id") or record.get("_line")


def call_timeline(model_calls: list[dict[str, Any]], started_at: float) -> list[dict[str, Any]]:
    """A run's model calls in the order they started: node, model, start (seconds into the run),
    seconds, prompt tokens (submitted, processed: the rest was reused from llama.cpp's cache) and
    completion tokens."""
    keys = ("prompt_tokens", "prompt_tokens_processed", "completion_tokens")
    timeline = [
        {"node": c.get("node"), "model": c.get("model"), "start": round(c["started_at"] - started_at, 3),
         "seconds": round(float(c.get("seconds") or 0.0), 3), **{k: c.get(k) for k in keys}}
        for c in model_calls if c.get("started_at") is not None
    ]  # fmt: skip
    return sorted(timeline, key=lambda c: c["start"])


def prediction_record(
    task: dict[str, Any],
    state: dict[str, Any],
    seconds: float,
    stream: dict[str, Any] | None = None,
    started_at: float | None = None,
) -> dict[str, Any]:
    """The task with its prediction (the submission format's ``text``, and beside it the ``citations``:
    each answer sentence with its supporting passages, as the reply message carries them) and route. ``stream``: seconds to the
    answer's first draft token and first shown text, when the run was streamed (``run_streamed``'s timings);
    ``started_at`` (wall clock): the route then lists the run's model calls in order (``call_timeline``). A task whose passages were retrieved (full
    RAG) carries the kept passages as ``contexts`` (what the answer was written from, as in MTRAG's Task C
    submissions, so ``evaluate`` scores against them); its own contexts move to ``reference_contexts``."""
    route = {**route_of(state), "seconds": round(seconds, 3)}
    if started_at is not None:
        route["calls"] = call_timeline(state.get("model_calls") or [], started_at)
    if stream is not None:
        for key, name in (("first_draft", "first_token_seconds"), ("first_shown", "first_shown_seconds")):
            if stream.get(key) is not None:
                route[name] = round(stream[key], 3)
        route["stream_chunks"], route["stream_retracts"] = stream["chunks"], stream["retracted"]
        route["draft_withdrawn"] = stream["draft_withdrawn"]
    reply = state["messages"][-1]  # nodes/finish.py: the answer, its citations and their passages
    metadata = reply.response_metadata["mtrag"]
    prediction = {"text": reply.content, "citations": metadata["citations"]}
    record = {**task, "predictions": [prediction], "route": route, "status": "ok"}
    if state.get("retrieve") or task.get("contexts") is None:
        if task.get("contexts") is not None:
            record["reference_contexts"] = task["contexts"]
        record["contexts"] = [as_context(p) for p in metadata["sources"]]
    return record


def answer_tasks(
    tasks_path: str | Path,
    output_path: str | Path,
    context: Context,
    *,
    limit: int | None = None,
    graph: Any = None,
    progress: bool = True,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    config: dict[str, Any] | None = None,
    concurrency: int = 1,
    endpoint_concurrency: int | None = None,
    retrieve: bool = False,
    stream: bool = False,
) -> RunSummary:
    """Answer every task of ``tasks_path`` into ``output_path`` (one line per task, resumable).

    ``concurrency``: tasks in flight at once (see ``mtrag_graph.runtime.concurrency``); ``endpoint_concurrency``:
    requests in flight per remote endpoint (default: one per task in flight, times the ensemble's
    candidates). Lines come in finishing order. ``retrieve``: retrieve passages for every task (full
    RAG, MTRAG Task C), whatever contexts it has. ``stream``: run each task streamed
    (``streaming.run_streamed``) and record in the route the seconds to the model's first draft token
    (``first_token_seconds``) and to the first text shown (``first_shown_seconds``), and the text
    events and retractions (the bench's first-token table).
    """
    if graph is None:
        graph = build_graph(output="state")
    writer, done = open_resumable(output_path, _task_key)
    summary = RunSummary(concurrency=concurrency)
    rows = list(read_jsonl(tasks_path))
    if limit is not None:
        rows = rows[:limit]
    bar = None
    if progress:
        bar = tqdm(total=len(rows), desc="answering", unit="task", file=sys.stderr)

    def answer_one(job: tuple[int, Any, str | None, str]) -> tuple[dict[str, Any], float]:
        line, raw, error, key = job
        started, started_at = time.perf_counter(), time.time()
        try:
            if error is not None:
                raise TaskError(task_label(raw, line), "<line>", error)
            # the graph's load_task validates the task, once: a bad one raises TaskError naming the field
            inputs = {"task": raw, "retrieve": True} if retrieve else {"task": raw}
            timings = None
            if stream:
                state, timings = run_streamed(graph, inputs, context=context, config=config)
            else:
                state = graph.invoke(inputs, context=context, config=config)
            seconds = time.perf_counter() - started
            return prediction_record(raw, state, seconds, timings, started_at), seconds
        except TaskError as failure:
            return _failed(raw, key, failure.field, failure.message), 0.0
        except Exception as failure:  # noqa: BLE001 - one task's crash must not end the run
            return _failed(raw, key, "<run>", f"{type(failure).__name__}: {failure}"), 0.0

    def pending_jobs() -> Iterator[tuple[int, Any, str | None, str]]:
        for line, raw, error in rows:
            summary.tasks += 1
            key = (
                raw.get("task_id") if isinstance(raw, dict) and isinstance(raw.get("task_id"), str) else None
            )
            key = key or f"line {line}"
            if key in done:
                summary.resumed += 1
                if done[key].get("status") == "failed":
                    summary.failed += 1
                if bar:
                    bar.update()
                continue
            yield line, raw, error, key

    started = time.perf_counter()
    try:
        # tasks run concurrently; this thread alone writes, so every line is whole and fsynced
        cap = endpoint_concurrency or default_endpoint_limit(context, concurrency)
        with endpoint_limit(cap) as endpoints:
            for _, (record, seconds) in run_bounded(answer_one, pending_jobs(), concurrency):
                if record["status"] == "failed":
                    summary.failed += 1
                    print(f"failed: {record['error']['task']}: field '{record['error']['field']}': "
                          f"{record['error']['message']}", file=sys.stderr)  # fmt: skip
                else:
                    summary.add(record, seconds)
                writer.write(record)
                if on_record:
                    on_record(record)
                if bar:
                    bar.update()
            summary.endpoints = endpoints.peaks()
    finally:
        summary.wall_seconds = time.perf_counter() - started
        writer.close()
        if bar:
            bar.close()
    note = local_models_note(models_of(context), concurrency)
    if note:
        summary.notes.append(note)
    return summary


def _failed(raw: Any, key: str, field_name: str, message: str) -> dict[str, Any]:
    base = raw if isinstance(raw, dict) else {}
    record = {**base, "status": "failed", "error": {"task": key, "field": field_name, "message": message}}
    if "task_id" not in record or not isinstance(record.get("task_id"), str):
        record["_line"] = key
    return record
