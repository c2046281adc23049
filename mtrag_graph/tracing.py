"""Tracing: node metadata on every run, a JSON-lines run-tree file, and OpenTelemetry spans.

LangGraph already makes every node a named run (LangSmith shows the graph as a tree). ``guarded``
adds what each node decided to its run's metadata (``annotate_current_run``), so every tracer that
collects runs sees it: LangSmith's, ``TraceFile`` and ``OpenTelemetryTracer`` below, or any other
``BaseTracer`` passed in ``config["callbacks"]``.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

from mtrag_graph.bookkeeping import cost_summary
from mtrag_graph.state import RelationClass

# LangGraph's own bookkeeping keys: left out of the trace file (LangSmith keeps them).
_INTERNAL_METADATA = {
    "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns", "checkpoint_ns", "langgraph_step",
    "ls_integration", "thread_id", "langgraph_node", "__pregel_task_id", "lc_versions", "ls_provider",
    "ls_model_type",
}  # fmt: skip


def node_metadata(node: str, state: dict[str, Any], update: dict[str, Any], seconds: float) -> dict[str, Any]:
    """What a node decided, from its input state and its update, as flat run metadata."""
    meta: dict[str, Any] = {"node": node, "task_id": update.get("task_id") or state.get("task_id"),
                            "node_seconds": round(seconds, 4)}  # fmt: skip
    if (relation := update.get("relation_class")) is not None:
        meta["relation_class"] = int(relation)
        meta["relation"] = RelationClass(relation).name
    for key in ("gate", "retries", "abstain_reason", "standalone_question", "global_rewrite", "answer"):
        if update.get(key) is not None:
            meta[key] = update[key]
    if "kept_passages" in update:
        meta["passages"] = len(state.get("passages") or [])
        meta["picked"] = [p.get("document_id") for p in update["kept_passages"]]
        meta["picked_scores"] = [p.get("score") for p in update["kept_passages"]]
    if update.get("answer_problems"):
        meta["answer_problems"] = update["answer_problems"]
    if (clarification := update.get("clarification")) is not None:
        meta["clarify"] = "asked" if clarification.get("asked") else "clear"
    if update.get("error"):
        meta["error"] = update["error"].get("message")
    if update.get("fallbacks"):
        meta["fallbacks"] = len(update["fallbacks"])
    if update.get("model_calls"):
        costs = cost_summary(update["model_calls"])
        meta.update(
            {key: costs[key] for key in ("models", "model_calls", "prompt_tokens", "completion_tokens")}
        )
        meta["model_seconds"] = round(sum(costs["model_seconds"].values()), 4)
    return meta


def annotate_current_run(metadata: dict[str, Any]) -> None:
    """Add ``metadata`` to the run of the node (or runnable) now executing, in every tracer.

    Tracers send a run's metadata when the run ends, so adding it before the node returns is enough.
    Outside a traced run this does nothing.
    """
    config = var_child_runnable_config.get() or {}
    manager = config.get("callbacks")
    if not isinstance(manager, BaseCallbackManager) or manager.parent_run_id is None:
        return
    run_id = str(manager.parent_run_id)
    for handler in manager.handlers:
        run = handler.run_map.get(run_id) if isinstance(handler, BaseTracer) else None
        if run is not None:
            run.extra.setdefault("metadata", {}).update(metadata)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _seconds(run: Run) -> float | None:
    if run.start_time and run.end_time:
        return round((run.end_time - run.start_time).total_seconds(), 4)
    return None


def _llm_usage(run: Run) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for generations in (run.outputs or {}).get("generations", []) or []:
        for generation in generations:
            message = generation.get("message") if isinstance(generation, dict) else None
            meta = (message or {}).get("kwargs", {}).get("response_metadata", {}) if message else {}
            for key in ("model_name", "prompt_tokens", "completion_tokens", "finish_reason"):
                if meta.get(key) is not None:
                    usage[key] = meta[key]
    return usage


def run_tree(run: Run) -> dict[str, Any]:
    """A run and its children as plain JSON: name, type, timing, metadata, error, children."""
    metadata = {k: v for k, v in (run.extra or {}).get("metadata", {}).items() if k not in _INTERNAL_METADATA}
    if run.run_type in ("llm", "chat_model"):
        metadata.update(_llm_usage(run))
    node: dict[str, Any] = {"name": run.name, "run_type": run.run_type, "start": _iso(run.start_time),
                            "seconds": _seconds(run), "metadata": metadata}  # fmt: skip
    if run.error:
        node["error"] = run.error.strip().splitlines()[-1][:300]
    children = sorted(run.child_runs, key=lambda child: (child.start_time, child.dotted_order or ""))
    node["children"] = [run_tree(child) for child in children]
    return node


class TraceFile(BaseTracer):
    """Append each finished top-level run (one graph invocation = one task) to ``path`` as one JSON line.

    Use it as a callback: ``graph.invoke(inputs, config={"callbacks": [TraceFile("trace.jsonl")]})``.
    """

    def __init__(self, path: str | Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = Path(path)
        self._lock = threading.Lock()

    def _persist_run(self, run: Run) -> None:
        tree = run_tree(run)
        inputs = run.inputs or {}
        task: dict[str, Any] = inputs["task"] if isinstance(inputs.get("task"), dict) else {}
        tree["task_id"] = task.get("task_id") or _first_task_id(tree)
        outputs = run.outputs or {}
        if outputs.get("answer") is not None:
            tree["answer"] = outputs["answer"]
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(tree, ensure_ascii=False, default=str) + "\n")


def _first_task_id(tree: dict[str, Any]) -> str | None:
    for child in tree["children"]:
        if child["metadata"].get("task_id"):
            return child["metadata"]["task_id"]
        if found := _first_task_id(child):
            return found
    return None


def _attribute(value: Any) -> Any:
    """An OpenTelemetry attribute value: scalars as they are, lists of scalars, anything else as JSON."""
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str | bool | int | float) for v in value):
        return list(value)
    return json.dumps(value, default=str)


class OpenTelemetryTracer(BaseTracer):
    """One OpenTelemetry span per run (graph, node, router, model call), nested like the run tree.

    Node metadata becomes span attributes ``mtrag.<key>``; ``openinference.span.kind`` lets Phoenix
    tell model calls from chains. Pass a ``TracerProvider`` or use the global one.
    """

    def __init__(self, tracer_provider: Any = None, **kwargs: Any) -> None:
        from opentelemetry import trace

        super().__init__(**kwargs)
        self._trace = trace
        self._tracer = trace.get_tracer("mtrag_graph", tracer_provider=tracer_provider)
        self._spans: dict[str, Any] = {}

    def _start_trace(self, run: Run) -> None:
        super()._start_trace(run)
        parent = self._spans.get(str(run.parent_run_id)) if run.parent_run_id else None
        context = self._trace.set_span_in_context(parent) if parent is not None else None
        kind = "LLM" if run.run_type in ("llm", "chat_model") else "CHAIN"
        self._spans[str(run.id)] = self._tracer.start_span(
            run.name,
            context=context,
            start_time=int(run.start_time.timestamp() * 1e9),
            attributes={"openinference.span.kind": kind, "langchain.run_type": run.run_type},
        )

    def _end_trace(self, run: Run) -> None:
        span = self._spans.pop(str(run.id), None)
        if span is not None:
            metadata = (run.extra or {}).get("metadata", {})
            for key, value in metadata.items():
                if value is not None and not key.startswith("__"):
                    span.set_attribute(f"mtrag.{key}", _attribute(value))
            if run.run_type in ("llm", "chat_model"):
                for key, value in _llm_usage(run).items():
                    span.set_attribute(f"llm.{key}", _attribute(value))
            if run.error:
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, run.error.strip().splitlines()[-1][:300]))
            end = run.end_time.timestamp() if run.end_time else None
            span.end(end_time=int(end * 1e9) if end else None)
        super()._end_trace(run)

    def _persist_run(self, run: Run) -> None:
        """Spans are exported as they end; nothing to do per top-level run."""


def otlp_tracer_from_env() -> OpenTelemetryTracer | None:
    """An ``OpenTelemetryTracer`` exporting over OTLP/HTTP when ``MTRAG_OTEL`` is set (1/true).

    The exporter reads the standard variables: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``.
    """
    if os.environ.get("MTRAG_OTEL", "").lower() not in ("1", "true", "yes"):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "mtrag-graph")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    atexit.register(provider.shutdown)  # flush the last spans when the process ends
    return OpenTelemetryTracer(provider)


def tracing_callbacks(trace_file: str | Path | None = None) -> list[BaseCallbackHandler]:
    """The callbacks for a run: a ``TraceFile`` when a path is given, OTLP spans when ``MTRAG_OTEL`` is set.

    LangSmith needs no callback: LangChain adds its tracer itself when ``LANGSMITH_TRACING=true``.
    """
    callbacks: list[BaseCallbackHandler] = []
    if trace_file:
        callbacks.append(TraceFile(trace_file))
    if (otel := otlp_tracer_from_env()) is not None:
        callbacks.append(otel)
    return callbacks
