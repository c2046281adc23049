"""Say the configured "I don't know" answer; the reason was recorded by the node that decided."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.state import AbstainReason, State


def abstain(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    return {
        "answer": runtime.context.idk_answer,
        "abstain_reason": str(state.get("abstain_reason") or AbstainReason.ERROR.value),
    }
