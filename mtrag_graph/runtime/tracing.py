"""Tracing: a JSON-lines run-tree file with each node's decisions, and OpenTelemetry spans.

LangGraph already makes every node a named run (LangSmith shows the graph as a tree), with the state
it read as inputs and the update it returned as outputs. ``TraceFile`` writes each task's run tree and
puts what every node decided next to it (``node_metadata``, computed from the run's inputs and
outputs: no tracer internals are touched). OpenTelemetry spans come from
``openinference-instrumentation-langchain`` (``instrument_opentelemetry``), which any OTLP viewer
(Phoenix, Langfuse, Jaeger) reads; a span carries the node's input and output state as JSON.
"""

from __future__ import annotations

import atexit
import json
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

from mtrag_graph import settings
from mtrag_graph.runtime.bookkeeping import cost_summary
from mtrag_graph.state import RelationClass, decision_keys

# LangGraph's own bookkeeping keys: left out of the trace file (LangSmith keeps them).
_INTERNAL_METADATA = {
    "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns", "checkpoint_ns", "langgraph_step",
    "ls_integration", "thread_id", "langgraph_node", "__pregel_task_id", "lc_versions", "ls_provider",
    "ls_model_type",
}  # fmt: skip


def node_metadata(node: str, state: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """What a node decided, from its input state and its update, as flat run metadata."""
    meta: dict[str, Any] = {"node": node, "task_id": update.get("task_id") or state.get("task_id")}
    # every decision (and the answer) that is a plain value, as it is; structured ones summarised below
    for key in (*decision_keys(), "answer"):
        if isinstance(update.get(key), str | int | float | bool):
            meta[key] = update[key]
    if (relation := update.get("relation_class")) is not None:
        meta["relation_class"] = int(relation)
        meta["relation"] = RelationClass(relation).name
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


def _is_node(run: Run) -> bool:
    """A graph node's run (not a router, not the node's model calls)."""
    metadata = (run.extra or {}).get("metadata", {})
    return run.run_type == "chain" and metadata.get("langgraph_node") == run.name


def run_tree(run: Run) -> dict[str, Any]:
    """A run and its children as plain JSON: name, type, timing, metadata, error, children."""
    metadata = {k: v for k, v in (run.extra or {}).get("metadata", {}).items() if k not in _INTERNAL_METADATA}
    if run.run_type in ("llm", "chat_model"):
        metadata.update(_llm_usage(run))
    if _is_node(run) and isinstance(run.outputs, dict):
        metadata.update(node_metadata(run.name, run.inputs or {}, run.outputs))
        metadata["node_seconds"] = _seconds(run)
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
        reply = _reply(outputs)
        if reply is not None:  # the run's reply (nodes/finish.py): the answer and its citations
            metadata = reply.get("response_metadata", {}).get("mtrag") or {}
            tree["task_id"] = tree["task_id"] or metadata.get("task_id")
            tree["answer"], tree["citations"] = reply.get("content"), metadata.get("citations", [])
        elif outputs.get("answer") is not None:  # a run ended before finish (build_graph(stop_after=...))
            tree["answer"] = outputs["answer"]
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(tree, ensure_ascii=False, default=str) + "\n")


def _reply(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """The run's reply message as a dict: the last of its output's messages, when that is the reply."""
    messages = outputs.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if isinstance(last, BaseMessage):
        last = last.model_dump()
    return last if isinstance(last, dict) and last.get("type") in ("ai", "AIMessageChunk") else None


def _first_task_id(tree: dict[str, Any]) -> str | None:
    for child in tree["children"]:
        if child["metadata"].get("task_id"):
            return child["metadata"]["task_id"]
        if found := _first_task_id(child):
            return found
    return None


def opentelemetry_provider(
    exporter: Any = None, service: str | None = None, project: str | None = None
) -> Any:
    """A ``TracerProvider`` exporting each span as it ends (``exporter``: default OTLP over HTTP).

    The OTLP exporter reads the standard variables: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), ``OTEL_EXPORTER_OTLP_HEADERS``. ``project`` names the
    Phoenix project the spans land in (default: Phoenix's "default").
    """
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415  (optional: OpenTelemetry tracing only)
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415  (optional: OpenTelemetry tracing only)
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415  (optional: OpenTelemetry tracing only)

    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415  (optional: OpenTelemetry tracing only)

        exporter = OTLPSpanExporter()
    name = service or settings.otel_service_name()
    attributes = {"service.name": name}
    if project:
        attributes["openinference.project.name"] = project
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


_INSTRUMENTED: dict[str, Any] = {}
_INSTRUMENT_LOCK = threading.Lock()


def instrument_opentelemetry(tracer_provider: Any) -> Any:
    """Send every LangChain run of this process (graph, node, router, model call) as an OpenInference span.

    Uses ``openinference-instrumentation-langchain``; returns the instrumentor (``.uninstrument()``
    turns it off again). Instrumenting a second time replaces the provider.
    """
    from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: PLC0415  (optional: OpenTelemetry tracing only)

    with _INSTRUMENT_LOCK:
        instrumentor = LangChainInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        instrumentor.instrument(tracer_provider=tracer_provider)
        _INSTRUMENTED["provider"] = tracer_provider
        return instrumentor


def instrument_from_env() -> bool:
    """With ``MTRAG_OTEL`` set, export spans over OTLP/HTTP (once per process); True when on."""
    if not settings.otel_enabled():
        return False
    if "provider" not in _INSTRUMENTED:
        provider = opentelemetry_provider()
        instrument_opentelemetry(provider)
        atexit.register(provider.shutdown)  # flush the last spans when the process ends
    return True


def tracing_callbacks(trace_file: str | Path | None = None) -> list[BaseCallbackHandler]:
    """The callbacks for a run: a ``TraceFile`` when a path is given. OTLP spans when ``MTRAG_OTEL`` is set.

    LangSmith needs no callback: LangChain adds its tracer itself when ``LANGSMITH_TRACING=true``;
    OpenTelemetry needs none either (``instrument_from_env`` instruments LangChain itself).
    """
    instrument_from_env()
    return [TraceFile(trace_file)] if trace_file else []
