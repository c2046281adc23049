"""How the current question relates to the previous exchange: four classes from two yes/no judgements."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.messages import QUESTION_CHARS, relation_messages
from mtrag_graph.models import ask_choice, get_chat_model
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.budget import cut
from mtrag_graph.state import RelationClass, State
from mtrag_graph.tasks import user_and_agent_pairs

CLASS_OF = {
    (True, True): RelationClass.CONTINUATION,
    (True, False): RelationClass.SAME_THREAD_SUBTOPIC,
    (False, True): RelationClass.ANSWER_FOLLOW_UP,
    (False, False): RelationClass.NEW_TOPIC,
}


def judge_relation(
    question: str, pair: tuple[str, str], context: Context, node: str, *, settled_by: bool | None = None
) -> tuple[RelationClass, dict[str, Any], list[dict[str, Any]]]:
    """Ask whether ``question`` relates to the pair's question and to its answer; map to a class.

    The question judgement comes first. ``settled_by``: the verdict on the question after which the
    caller's decision no longer depends on the answer judgement, which is then not asked (its
    ``related_to_answer`` is recorded as None and the class is taken with it "yes", the same side as a
    fallback). None: both are always asked (the decisions benchmark scores all four classes).
    An unparseable judgement counts as "related" (keeping history is the safer error), recorded.
    """
    model = get_chat_model(context.classify_model)
    previous_question = cut(pair[0], QUESTION_CHARS)
    fallbacks: list[dict[str, Any]] = []
    verdicts: dict[str, bool | None] = {"question": None, "answer": None}
    for target, messages in relation_messages(question, pair, context).items():
        if target == "answer" and settled_by is not None and verdicts["question"] is settled_by:
            break
        value, raws = ask_choice(model, messages, ["yes", "no"], retries=context.parse_retries)
        if value is None:
            fallbacks.append({"node": node, "used": f"related to {target}: yes", "raw": raws[-1]})
            value = "yes"
        verdicts[target] = value == "yes"
    relation = CLASS_OF[(bool(verdicts["question"]), verdicts["answer"] is not False)]
    vote = {"previous_question": previous_question, "related_to_question": verdicts["question"],
            "related_to_answer": verdicts["answer"], "class": int(relation)}  # fmt: skip
    return relation, vote, fallbacks


@guarded
def classify_relation(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    if not runtime.context.classify_history:
        return {}
    pairs = user_and_agent_pairs(state.get("history", []))
    if not pairs:
        return {"relation_class": int(RelationClass.NEW_TOPIC), "relation_votes": []}
    # with no older exchange to walk back over, continuation (1) and same-thread subtopic (2) keep the
    # same turns (the last exchange): after a "yes" on the question the answer judgement changes nothing
    older = runtime.context.history_walk_cap > 0 and len(pairs) > 1
    settled = True if runtime.context.relation_judge_when_needed and not older else None
    relation, vote, fallbacks = judge_relation(
        state["question"], pairs[-1], runtime.context, "classify_relation", settled_by=settled
    )
    return {
        "relation_class": int(relation),
        "relation_votes": [vote],
        "fallbacks": fallbacks,
    }
