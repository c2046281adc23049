"""Which earlier turns the rest of the graph sees, by relation class.

Class 1 keeps the last exchange and walks back over older exchanges while each still classifies as
a continuation, adding at most ``history_walk_cap`` of them. Classes 2 and 3 keep the last exchange;
class 4 keeps nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.relation import judge_relation
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import RelationClass, State
from mtrag_graph.tasks import pairs_to_turns, user_and_agent_pairs


@guarded
def select_history(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    pairs = user_and_agent_pairs(state.get("history", []))
    if not runtime.context.classify_history:
        keep = runtime.context.history_pairs_without_classifier
        return {"selected_history": pairs_to_turns(pairs[-keep:] if keep > 0 else [])}
    relation = RelationClass(state["relation_class"])
    if relation == RelationClass.NEW_TOPIC or not pairs:
        return {"selected_history": []}
    if relation != RelationClass.CONTINUATION:
        return {"selected_history": pairs_to_turns(pairs[-1:])}
    kept, votes, fallbacks = [pairs[-1]], [], []
    for pair in reversed(pairs[-1 - runtime.context.history_walk_cap : -1]):
        # an older exchange not related to the question is no continuation whatever its answer says
        older, vote, failed = judge_relation(
            state["question"], pair, runtime.context, "select_history", settled_by=False
        )
        votes.append(vote)
        fallbacks.extend(failed)
        if older != RelationClass.CONTINUATION:
            break
        kept.insert(0, pair)
    return {
        "selected_history": pairs_to_turns(kept),
        "relation_votes": [*state.get("relation_votes", []), *votes],
        "fallbacks": fallbacks,
    }
