"""Graph state. Inputs are validated into a ``Task`` by the first node; nodes return partial updates.

Every key is declared once, with its type: in ``State`` when the package's nodes read it, or in the
module of the node that writes it (``@guarded(writes=...)``, for a key no other node reads). The
graph's schema (``graph_schema``), the prediction's route (``decision_keys``), the trace's node
metadata and the candidate branches' input all derive from these declarations. A key marked
``MATERIAL`` is working material for later nodes, not a decision: the route leaves it out.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum, IntEnum, StrEnum
from functools import cache
from typing import Annotated, Any, NotRequired, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic's JSON schemas need it on Python < 3.12

from mtrag_graph.passages import Passage


class RelationClass(IntEnum):
    """How the current question relates to the previous exchange (Q(t-1), A(t-1))."""

    CONTINUATION = 1  # related to both the previous question and the previous answer
    SAME_THREAD_SUBTOPIC = 2  # related to the previous question only
    ANSWER_FOLLOW_UP = 3  # related to the previous answer only
    NEW_TOPIC = 4  # related to neither


class AbstainReason(StrEnum):
    """Why a run said "I don't know": what a user or researcher tells apart. The evidence is in the route:
    ``gate_evidence`` for the gate, ``verdict`` (its ``why`` and signals) for the verdict, ``error``."""

    NO_EVIDENCE = "no_evidence"  # no passages to answer from
    GATE_NO = "gate_no"  # the gate: the passages do not hold the answer (or never name what is asked)
    VERDICT = "verdict"  # the verdict on the draft (judging/verdict.py): why is in ``verdict["why"]``
    ERROR = "error"  # a node failed (``error``), every candidate of the ensemble among them


class RetryReason(StrEnum):
    """Why the verdict asked for another draft; ``generate`` picks the retry's instruction by it."""

    DECLINED = "declined"  # a whole-answer decline although the gate judged the passages relevant
    PROBLEMS = "problems"  # the draft had problems (``answer_problems``)


@dataclass(frozen=True)
class Role:
    name: str


MATERIAL = Role("material")  # Annotated[..., MATERIAL]: not a decision, left out of the route


class InputState(TypedDict, total=False):
    """What a caller passes: the conversation as ``messages`` (a thread keeps it: each run sends only the
    new user message), or one MTRAG task dict as ``task`` (``input`` conversation, ``contexts`` passages).

    ``contexts``: the passages a conversation is answered from (an MTRAG task's ``contexts``: objects with
    ``text``, ``document_id``, ``title``, and any origin field of ``passages.Passage``); a thread keeps them for its later runs; absent or ``None``: the
    passages are retrieved from ``Context.index_dir``. A task brings its own and ignores these.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    contexts: list[dict[str, Any]] | None
    task: dict[str, Any]
    retrieve: bool  # retrieve passages even when the task has contexts


class Citation(TypedDict):
    """One sentence of the answer and the passages that back it (``citations.answer_citations``), with
    the grounding check's measures of it (``judging.grounding.SentenceSupport``)."""

    text: str
    supported: bool
    passages: list[int]  # indices into ``ReplyMetadata.sources``, best first
    document_ids: list[str]
    score: NotRequired[float]
    start: NotRequired[int]
    end: NotRequired[int]
    unsupported_facts: NotRequired[list[str]]
    claim: NotRequired[bool]
    sources: NotRequired[list[str]]  # where each cited passage comes from, for passages of files


class ReplyMetadata(TypedDict):
    """What the reply ``AIMessage`` carries in ``response_metadata["mtrag"]`` beside its text: the
    citations, computed once when the reply is made, and the passages they index, whole (text and
    origin), so a page, an API, a terminal or a prediction file needs nothing else to show them."""

    task_id: str
    kind: str  # "answer" | "abstention" | "clarifying_question"
    abstain_reason: str | None  # an ``AbstainReason`` value when the run abstained
    citations: list[Citation]
    sources: list[Passage]  # the passages the answer was written from (the kept passages)


class OutputState(TypedDict):
    """What a run returns: the conversation, whose last message is the reply (an ``AIMessage`` with a
    ``ReplyMetadata`` in its ``response_metadata["mtrag"]``)."""

    messages: list[AnyMessage]


class State(InputState, total=False):
    task_id: Annotated[str, MATERIAL]
    reply_id: Annotated[str, MATERIAL]  # the id of this run's reply message (stream chunks and the final one)
    from_messages: Annotated[bool, MATERIAL]  # the run answers ``messages`` (a conversation), not a ``task``
    history: Annotated[
        list[dict[str, str]], MATERIAL
    ]  # the conversation before the question: {"speaker", "text"}
    question: Annotated[str, MATERIAL]  # the user's last turn
    passages: Annotated[list[Passage] | None, MATERIAL]  # candidate passages (given, or retrieved)
    # rewriting and relation classification
    pronoun_detected: bool
    global_rewrite: str
    fragment: dict[str, Any]  # an elliptic turn asked again as the previous question (text.ellipsis)
    relation_class: int  # a RelationClass
    relation_votes: Annotated[
        list[dict[str, Any]], MATERIAL
    ]  # the yes/no judgements behind the class and the walk-back
    selected_history: list[dict[str, str]]
    history_summary: str
    intent: str
    standalone_question: str
    rewrite_doubts: list[str]  # why the standalone question may not ask what the user asked (nodes.rewrite)
    clarification: dict[str, Any]  # clarify node: {"asked", "question", "reply"}
    # evidence
    kept_passages: Annotated[list[Passage], MATERIAL]  # top-k after reranking, each with its score
    gate: str  # "yes" | "no" | "skipped" | "advisory_no" (a "no" that did not decline: gate_declines)
    gate_evidence: dict[str, Any]  # what the gate's decision rests on: yes-probability, classifier score
    # generation
    draft: Annotated[str, MATERIAL]
    draft_finish_reason: Annotated[str | None, MATERIAL]
    answer_problems: list[str]
    retries: int
    retry_reason: RetryReason  # why the last check asked for another draft
    decline_retried: bool  # the verdict asked once more after a whole-answer decline
    decline_offered: bool  # the last draft's prompt offered "I don't know" (first_draft "may_decline")
    # the drafts the verdict did not take, in order: {"draft" (cut), "problems", "outcome" (the retry's
    # reason or the abstention's)}; the answer problems of a draft that was retried are otherwise overwritten
    rejected_drafts: list[dict[str, Any]]
    # grounding check: per-sentence support ({"text", "supported", "score", "passages", "document_ids",
    # "unsupported_facts", ...}), sentences dropped, the answer before the check
    grounding: dict[str, Any]
    verdict: dict[str, Any]  # the verdict on the last draft: {"outcome", "why", "signals"} (judging.verdict)
    # answer ensemble (only when two or more candidates are configured)
    candidate_answers: Annotated[
        list[dict[str, Any]], MATERIAL, operator.add
    ]  # one entry per candidate branch
    judgement: dict[str, Any]  # the judge's scores for every candidate and the reason for the pick
    chosen_candidate: int  # index into Context.candidates (the retry uses it too)
    answer: Annotated[str, MATERIAL]  # the prediction carries it beside the route
    shown: Annotated[
        str, MATERIAL
    ]  # the answer text already sent to the stream (mtrag_graph.nodekit.release)
    abstain_reason: AbstainReason | None
    error: dict[str, str] | None  # {"node", "message"} when a node failed
    fallbacks: Annotated[list[dict[str, Any]], operator.add]  # safe defaults used for unparseable replies
    # bookkeeping, written only by the node wrapper (nodekit/wrapper.guarded); see mtrag_graph.runtime.bookkeeping
    model_calls: Annotated[list[dict[str, Any]], MATERIAL, operator.add]
    node_seconds: Annotated[list[dict[str, Any]], MATERIAL, operator.add]


_DECLARED: dict[str, Any] = {}  # keys declared by node modules (``@guarded(writes=...)``), with their types


@cache
def _state_hints() -> dict[str, Any]:
    return get_type_hints(State, include_extras=True)


def declare(writes: type) -> None:
    """Add a node's declared keys (a ``TypedDict``) to the graph's state; a key is declared once."""
    known = _state_hints()
    for key, annotation in get_type_hints(writes, include_extras=True).items():
        if key in known or _DECLARED.get(key, annotation) != annotation:
            raise TypeError(f"state key '{key}' is already declared (state.State or another node)")
        _DECLARED[key] = annotation


def state_keys() -> dict[str, Any]:
    """Every key of the graph's state with its type: ``State``'s and the nodes' declared ones."""
    return {**_state_hints(), **_DECLARED}


def graph_schema() -> type:
    """The graph's state schema: ``State`` with every key a node declared (LangGraph drops the others)."""
    if not _DECLARED:
        return State
    return TypedDict("State", state_keys(), total=False)  # type: ignore[operator]


def _marked(annotation: Any, mark: Any) -> bool:
    return mark in getattr(annotation, "__metadata__", ())


def decision_keys() -> tuple[str, ...]:
    """The keys a run's route copies from the state: every key but the inputs and ``MATERIAL``."""
    inputs = get_type_hints(InputState)
    return tuple(k for k, t in state_keys().items() if k not in inputs and not _marked(t, MATERIAL))


def run_keys() -> tuple[str, ...]:
    """The keys a run writes: every key but the inputs, which a thread keeps (its messages, its contexts).

    A thread's next run starts with these cleared (``nodes/load_task.py``), so nothing of the last turn's
    decisions lingers.
    """
    inputs = get_type_hints(InputState)
    return tuple(key for key in state_keys() if key not in inputs)


def accumulated_keys() -> tuple[str, ...]:
    """Keys with a reducer (several writers meet there): the run's bookkeeping and fan-out results."""
    return tuple(k for k, t in state_keys().items() if callable(getattr(t, "__metadata__", (None,))[-1]))


def encodable(text: str) -> str:
    """``text`` with every lone surrogate (from a passage or a model reply) made U+FFFD, so UTF-8 takes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def plain(value: Any) -> Any:
    """``value`` as plain data (enums as their values, tuples as lists, text that UTF-8 can encode),
    what the state keeps.

    Checkpointers store the state with msgpack; LangGraph refuses to load types it does not know
    (``LANGGRAPH_STRICT_MSGPACK``), so a saved chat thread must hold nothing but plain data. Enums
    compare equal to their values (``StrEnum``, ``IntEnum``), so code reading the state is unchanged.
    PostgreSQL keeps a checkpoint's strings in JSON, which refuses a lone surrogate (a model's reply
    may hold one): it becomes U+FFFD.
    """
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def without(state: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    dropped = set(keys)
    return {key: value for key, value in state.items() if key not in dropped}


# ---- predicates over a run's state (nodes and routers read them) ----------------------------------


def needs_retrieval(state: Mapping[str, Any]) -> bool:
    """Full-RAG mode: the task has no ``contexts`` field, or the caller asked for retrieval."""
    return state.get("passages") is None or bool(state.get("retrieve"))


def retrieved_setting(state: Mapping[str, Any]) -> bool:
    """The passages were retrieved (full RAG, MTRAG Task C), not given with the task or the
    conversation (Task B)."""
    if state.get("retrieve"):
        return True
    if state.get("from_messages"):
        return state.get("contexts") is None
    task = state.get("task")
    return isinstance(task, Mapping) and task.get("contexts") is None
