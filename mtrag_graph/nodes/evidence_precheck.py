"""No passages to answer from: abstain before spending any model time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import AbstainReason, State


def needs_retrieval(state: Mapping[str, Any]) -> bool:
    """Full-RAG mode: the task has no ``contexts`` field, or the caller asked for retrieval."""
    return state.get("passages") is None or bool(state.get("retrieve"))


def retrieved_setting(state: Mapping[str, Any]) -> bool:
    """The passages were retrieved (full RAG, MTRAG Task C), not given with the task (Task B)."""
    task = state.get("task")
    return bool(state.get("retrieve")) or (isinstance(task, Mapping) and task.get("contexts") is None)


@guarded
def evidence_precheck(state: State, runtime: Any) -> dict[str, Any]:
    if needs_retrieval(state) or state.get("passages"):
        return {}
    return {"abstain_reason": AbstainReason.NO_EVIDENCE}
