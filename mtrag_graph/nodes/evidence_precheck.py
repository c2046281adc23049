"""No passages to answer from: abstain before spending any model time."""

from __future__ import annotations

from typing import Any

from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import AbstainReason, State, needs_retrieval


@guarded
def evidence_precheck(state: State, runtime: Any) -> dict[str, Any]:
    if needs_retrieval(state) or state.get("passages"):
        return {}
    return {"abstain_reason": AbstainReason.NO_EVIDENCE}
