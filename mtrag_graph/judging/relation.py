"""How a question relates to the exchange before it: two yes/no judgements of the small model, one class.

The classify_relation node records the class; select_history walks back over older exchanges with the
same judgement (``judge_relation``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mtrag_graph.models import ask_choice, get_chat_model
from mtrag_graph.prompts.budget import cut
from mtrag_graph.prompts.build import QUESTION_CHARS, relation_messages
from mtrag_graph.state import RelationClass

if TYPE_CHECKING:
    from mtrag_graph.context import Context

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
