"""Graph state. Inputs are validated into a ``Task`` by the first node; nodes return partial updates."""

from __future__ import annotations

import operator
from enum import IntEnum
from typing import Annotated, Any, TypedDict


class RelationClass(IntEnum):
    """How the current question relates to the previous exchange (Q(t-1), A(t-1))."""

    CONTINUATION = 1  # related to both the previous question and the previous answer
    SAME_THREAD_SUBTOPIC = 2  # related to the previous question only
    ANSWER_FOLLOW_UP = 3  # related to the previous answer only
    NEW_TOPIC = 4  # related to neither


class AbstainReason:
    NO_EVIDENCE = "no_evidence"
    GATE_NO = "gate_no"
    FAILED_RETRY = "failed_retry"
    GENERATOR_DECLINED = "generator_declined"
    UNGROUNDED = "ungrounded"  # no sentence of the answer is backed by the passages (nodes/ground_answer.py)
    UNVERIFIED = "unverified"  # an answer forced by the decline retry that the model did not confirm
    CANDIDATES_FAILED = "candidates_failed"  # every candidate of the ensemble failed
    ERROR = "error"


class InputState(TypedDict, total=False):
    """What a caller passes: one MTRAG task dict (``input`` conversation, ``contexts`` passages)."""

    task: dict[str, Any]
    retrieve: bool  # retrieve passages even when the task has contexts


class State(InputState, total=False):
    task_id: str
    history: list[dict[str, str]]  # the conversation before the question: {"speaker", "text"}
    question: str  # the user's last turn
    passages: list[dict[str, Any]]  # candidate passages (given, or retrieved)
    # rewriting and relation classification
    pronoun_detected: bool
    global_rewrite: str
    relation_class: int
    relation_votes: list[dict[str, Any]]  # the yes/no judgements behind the class and the walk-back
    selected_history: list[dict[str, str]]
    history_summary: str
    intent: str
    standalone_question: str
    clarification: dict[str, Any]  # clarify node: {"asked", "question", "reply"}
    # evidence
    kept_passages: list[dict[str, Any]]  # top-k after reranking, each with its score
    gate: str  # "yes" | "no"
    gate_evidence: dict[str, Any]  # what the gate's decision rests on: yes-probability, classifier score
    # generation
    draft: str
    draft_finish_reason: str | None
    answer_problems: list[str]
    retries: int
    evidence_quotes: dict[str, Any]  # answer_mode "evidence_first": the quotes, those not found, the outcome
    decline_retried: bool  # check_answer asked once more after a whole-answer decline
    # grounding check: per-sentence support ({"text", "supported", "score", "passages", "document_ids",
    # "unsupported_facts", ...}), sentences dropped, the answer before the check
    grounding: dict[str, Any]
    # answer ensemble (only when two or more candidates are configured)
    candidate_answers: Annotated[list[dict[str, Any]], operator.add]  # one entry per candidate branch
    judgement: dict[str, Any]  # the judge's scores for every candidate and the reason for the pick
    chosen_candidate: int  # index into Context.candidates (the retry uses it too)
    answer: str
    abstain_reason: str | None
    error: dict[str, str] | None  # {"node", "message"} when a node failed
    fallbacks: Annotated[list[dict[str, Any]], operator.add]  # safe defaults used for unparseable replies
    # bookkeeping, written only by the node wrapper (nodes/_common.guarded); see mtrag_graph.bookkeeping
    model_calls: Annotated[list[dict[str, Any]], operator.add]
    node_seconds: Annotated[list[dict[str, Any]], operator.add]
