"""End every run: send what the stream has not shown of the final answer, and add the reply message.

While the answer is written only the sentences the checks passed are sent (``mtrag_graph.nodekit.release``);
the rest of the final answer (its last sentence, or the whole of an abstention, a clarifying question,
an ensemble's pick) is sent now. When the final answer does not begin with what was shown, what was
shown is withdrawn first (``events.RETRACT``) and the answer follows whole.

The reply is an ``AIMessage`` appended to ``messages``, under the id its streamed chunks carried
(``reply_id``): its content is the answer, its ``response_metadata["mtrag"]`` a ``state.ReplyMetadata``
(the citations, the passages they cite with their text and origin, why the run abstained). ``response_metadata`` is where LangChain puts what
a model's response says about itself, and chat model integrations do not send it back to a model when
the conversation is passed on (``additional_kwargs`` is the provider's payload, which some do).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from mtrag_graph.citations import answer_citations
from mtrag_graph.context import Context
from mtrag_graph.nodekit.events import RETRACT, emit
from mtrag_graph.nodekit.release import show
from mtrag_graph.state import ReplyMetadata, State


def reply_kind(state: Mapping[str, Any]) -> str:
    """``clarifying_question`` (the question is the answer), ``abstention`` or ``answer``."""
    clarification = state.get("clarification") or {}
    if clarification.get("asked") and not clarification.get("reply") and state.get("answer"):
        return "clarifying_question"
    return "abstention" if state.get("abstain_reason") is not None else "answer"


def reply_metadata(state: Mapping[str, Any]) -> ReplyMetadata:
    """The reply's metadata: each cited sentence with the passages behind it, and those passages. The
    one place citations are worked out; everything that shows or writes them reads them here."""
    reason = state.get("abstain_reason")
    return ReplyMetadata(
        task_id=str(state.get("task_id") or ""),
        kind=reply_kind(state),
        abstain_reason=None if reason is None else str(reason),
        citations=answer_citations(state),  # type: ignore[typeddict-item]
        sources=list(state.get("kept_passages") or []),
    )


def finish(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    answer = state.get("answer") or ""
    shown = state.get("shown") or ""
    if shown and not answer.startswith(shown):
        emit(RETRACT)
        shown = ""
    if len(answer) > len(shown):
        show(answer[len(shown) :], state)
    reply = AIMessage(
        answer, id=state.get("reply_id"), response_metadata={"mtrag": dict(reply_metadata(state))}
    )
    # the candidate passages were the run's working material: a thread keeps its contexts, and the
    # reply the passages it was written from, so a served thread stores the passages once, not twice
    return {"shown": answer, "messages": [reply], "passages": None}
