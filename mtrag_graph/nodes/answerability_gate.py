"""Do the kept passages, as a whole, hold what the user asks? One calibrated yes/no.

The decision itself is ``mtrag_graph.decisions.gate.gate_decision``: a classifier over cheap evidence
features (``Context.gate_classifier``), a threshold on the model's yes-probability
(``Context.gate_threshold``), or the model's constrained reply. ``mtrag-graph decisions`` measures it.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.decisions.gate import gate_decision
from mtrag_graph.nodes._common import guarded
from mtrag_graph.state import AbstainReason


@guarded
def answerability_gate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    if not state.get("kept_passages"):
        return {"gate": "no", "abstain_reason": AbstainReason.NO_EVIDENCE}
    if not context.use_gate:
        return {"gate": "skipped"}
    decision = gate_decision(state, context)
    update: dict[str, Any] = {
        "gate": decision["gate"],
        "gate_evidence": {k: decision[k] for k in ("p_yes", "score") if decision.get(k) is not None},
    }
    if decision["fallback"]:
        update["fallbacks"] = [
            {"node": "answerability_gate", "used": decision["gate"], "raw": decision["raw"]}
        ]
    if decision["gate"] == "no":
        update["abstain_reason"] = AbstainReason.GATE_NO
    return update
