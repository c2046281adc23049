"""How the current question relates to the previous exchange: four classes from two yes/no judgements."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from mtrag_graph.budget import cut
from mtrag_graph.context import Context
from mtrag_graph.models import CallLog, ask_choice, get_chat_model
from mtrag_graph.nodes._common import AGENT_TURN_CHARS, QUESTION_CHARS, guarded, user_and_agent_pairs
from mtrag_graph.prompts import rewrite as prompts
from mtrag_graph.state import RelationClass

CLASS_OF = {
    (True, True): RelationClass.CONTINUATION,
    (True, False): RelationClass.SAME_THREAD_SUBTOPIC,
    (False, True): RelationClass.ANSWER_FOLLOW_UP,
    (False, False): RelationClass.NEW_TOPIC,
}


def judge_relation(
    question: str, pair: tuple[str, str], context: Context, log: CallLog
) -> tuple[RelationClass, dict[str, Any], list[dict[str, Any]]]:
    """Ask whether ``question`` relates to the pair's question and to its answer; map to a class.

    An unparseable judgement counts as "related" (keeping history is the safer error), recorded.
    """
    model = get_chat_model(context.classify_model)
    previous_question, previous_answer = cut(pair[0], QUESTION_CHARS), pair[1]
    question = cut(question, QUESTION_CHARS)
    fallbacks: list[dict[str, Any]] = []
    verdicts = {}
    asks = {
        "question": prompts.RELATED_TO_QUESTION.format(
            previous_question=previous_question, question=question
        ),
        "answer": prompts.RELATED_TO_ANSWER.format(
            previous_answer=cut(previous_answer, AGENT_TURN_CHARS) or "(no answer)", question=question
        ),
    }
    for target, body in asks.items():
        messages = [SystemMessage(content=context.rewrite_system_prompt), HumanMessage(content=body)]
        value, raws = ask_choice(model, messages, ["yes", "no"], log, retries=context.parse_retries)
        if value is None:
            fallbacks.append({"node": log.node, "used": f"related to {target}: yes", "raw": raws[-1]})
            value = "yes"
        verdicts[target] = value == "yes"
    relation = CLASS_OF[(verdicts["question"], verdicts["answer"])]
    vote = {"previous_question": previous_question, "related_to_question": verdicts["question"],
            "related_to_answer": verdicts["answer"], "class": int(relation)}  # fmt: skip
    return relation, vote, fallbacks


@guarded
def classify_relation(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    if not runtime.context.classify_history:
        return {}
    pairs = user_and_agent_pairs(state.get("history", []))
    if not pairs:
        return {"relation_class": int(RelationClass.NEW_TOPIC), "relation_votes": []}
    log = CallLog(node="classify_relation")
    relation, vote, fallbacks = judge_relation(state["question"], pairs[-1], runtime.context, log)
    return {
        "relation_class": int(relation),
        "relation_votes": [vote],
        "model_calls": log.records,
        "fallbacks": fallbacks,
    }
