"""The one summary of what a run cost and decided, as the prediction's ``route``, the trace and the bench see it.

Model calls are recorded once, by a ``CallLog`` callback handler that the node wrapper
(``nodekit/wrapper.guarded``) attaches to each node; the wrapper also times the node. Both land in the
state (``model_calls``, ``node_seconds``). ``cost_summary`` turns them into totals; ``route_of`` adds
the decisions (every state key but the inputs and ``MATERIAL``: ``state.decision_keys``); the trace metadata (``tracing.node_metadata``) and the bench table
(``bench.preset_stats``) are built from these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mtrag_graph.state import decision_keys

TOKEN_KEYS = ("prompt_tokens", "prompt_tokens_processed", "prompt_tokens_unique", "completion_tokens")


def _seconds_by_node(entries: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for entry in entries:
        totals[entry["node"]] = round(totals.get(entry["node"], 0.0) + float(entry.get("seconds") or 0.0), 3)
    return totals


def cost_summary(
    model_calls: Iterable[Mapping[str, Any]], node_runs: Iterable[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Model calls and node timings as totals: calls, models, tokens, errors, seconds by node."""
    calls = list(model_calls)
    summary: dict[str, Any] = {
        "model_calls": len(calls),
        "models": sorted({str(c.get("model")) for c in calls}),
        "model_seconds": _seconds_by_node(calls),
        "node_seconds": _seconds_by_node(node_runs),
    }
    for key in TOKEN_KEYS:
        summary[key] = sum(int(c.get(key) or 0) for c in calls)
    summary["model_errors"] = [
        {"node": c["node"], "attempt": c.get("attempt"), "error": c["error"]} for c in calls if c.get("error")
    ]
    return summary


def route_of(state: Mapping[str, Any]) -> dict[str, Any]:
    """The decisions a run took and what they cost, as written next to each prediction."""
    route = {key: state.get(key) for key in decision_keys() if key in state}
    route["abstained"] = state.get("abstain_reason") is not None
    route["kept_passages"] = [
        {"document_id": p.get("document_id"), "score": p.get("score")} for p in state.get("kept_passages", [])
    ]
    route.update(cost_summary(state.get("model_calls", []), state.get("node_seconds", [])))
    return route
