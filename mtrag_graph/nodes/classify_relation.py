"""How the current question relates to the previous exchange: four classes from two yes/no judgements."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.relation import judge_relation
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import RelationClass, State
from mtrag_graph.tasks import user_and_agent_pairs


@guarded
def classify_relation(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    if not runtime.context.classify_history:
        return {}
    pairs = user_and_agent_pairs(state.get("history", []))
    if not pairs:
        return {"relation_class": int(RelationClass.NEW_TOPIC), "relation_votes": []}
    # with no older exchange to walk back over, continuation (1) and same-thread subtopic (2) keep the
    # same turns (the last exchange): after a "yes" on the question the answer judgement changes nothing
    # (recorded as 1); the four classes are told apart when an older exchange is there
    older = runtime.context.history_walk_cap > 0 and len(pairs) > 1
    settled = None if older else True
    relation, vote, fallbacks = judge_relation(
        state["question"], pairs[-1], runtime.context, "classify_relation", settled_by=settled
    )
    return {
        "relation_class": int(relation),
        "relation_votes": [vote],
        "fallbacks": fallbacks,
    }
