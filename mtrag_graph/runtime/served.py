"""The graph a LangGraph server serves (``langgraph.json``): the default graph, traced as the environment says.

``langgraph dev``, LangGraph Platform and any Agent Protocol server load ``graph`` from here. It is
``build_graph()`` (messages in, the cited reply out, ``Context()`` unless the run says otherwise) with the
tracing the commands get from their flags, taken from the environment instead: OpenTelemetry spans
with ``MTRAG_OTEL=true``, a trace file with ``MTRAG_TRACE_FILE=PATH`` (LangSmith with its own
``LANGSMITH_TRACING``, as everywhere).
"""

from __future__ import annotations

from mtrag_graph import settings
from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.tracing import tracing_callbacks

graph = build_graph().with_config(callbacks=tracing_callbacks(settings.trace_file()))
