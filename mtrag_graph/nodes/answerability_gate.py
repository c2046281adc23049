"""One strict yes/no: do the kept passages, as a whole, hold what the user asks?"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.messages import gate_messages
from mtrag_graph.models import ask_choice, get_chat_model
from mtrag_graph.nodes._common import guarded
from mtrag_graph.state import AbstainReason


@guarded
def answerability_gate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    if not state.get("kept_passages"):
        return {"gate": "no", "abstain_reason": AbstainReason.NO_EVIDENCE}
    if not context.use_gate:
        return {"gate": "skipped"}
    value, raws = ask_choice(
        get_chat_model(context.gate_model),
        gate_messages(state, context),
        ["yes", "no"],
        retries=context.parse_retries,
    )
    update: dict[str, Any] = {}
    if value is None:
        value = context.gate_fallback
        update["fallbacks"] = [{"node": "answerability_gate", "used": value, "raw": raws[-1]}]
    update["gate"] = value
    if value == "no":
        update["abstain_reason"] = AbstainReason.GATE_NO
    return update
