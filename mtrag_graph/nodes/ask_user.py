"""Ask the user the clarifying question the clarify node stored, and wait for the reply (an ``interrupt``).

The node only interrupts: the question was decided and stored by ``clarify`` (in ``clarification`` and,
as an ``AIMessage``, in ``messages``). LangGraph runs an interrupted node again from the top when the
run resumes, so a node that computed its question before interrupting would compute it again; this
one reads it from the checkpoint, and the question the user answered is the one they were asked, after
a process restart too.

The interrupt's value is a human-in-the-loop request in the shape LangChain's ``HumanInTheLoopMiddleware``
sends and Agent Chat UI renders (``action_requests`` / ``review_configs``), with the question also under
``clarifying_question``. Resume with ``Command(resume=reply)``: the reply as a string, or a decision
(``{"type": "respond" | "reject", "message": reply}``, or ``{"decisions": [that]}`` as the UI sends it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import interrupt

from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import State
from mtrag_graph.tasks import TaskError

ACTION = "clarify"  # the action name of the interrupt's request


def clarification_request(question: str) -> dict[str, Any]:
    """The interrupt's value: a human-in-the-loop request whose one action is answering ``question``."""
    return {
        "action_requests": [{"name": ACTION, "args": {"question": question}, "description": question}],
        "review_configs": [{"action_name": ACTION, "allowed_decisions": ["respond"]}],
        "clarifying_question": question,
    }


def reply_text(resume: Any, task: str = "<unknown>") -> str:
    """The user's reply from a resume value: a string, a decision, or a list of decisions."""
    if isinstance(resume, Mapping) and "decisions" in resume:
        resume = resume["decisions"]
    if isinstance(resume, list):
        resume = resume[0] if resume else ""
    if isinstance(resume, Mapping):  # a decision: {"type", "message"}, or the older {"type", "args"}
        resume = resume.get("message", resume.get("args", ""))
    if not isinstance(resume, str):
        raise TaskError(
            task,
            "resume",
            f"expected the reply text or a decision with a 'message', got {type(resume).__name__}",
        )
    return resume.strip()


@guarded
def ask_user(state: State, runtime: Any) -> dict[str, Any]:
    clarification = dict(state.get("clarification") or {})
    reply = reply_text(interrupt(clarification_request(clarification["question"])), state.get("task_id", ""))
    clarification["reply"] = reply
    return {
        "clarification": clarification,
        "question": f"{state['question']} ({reply})" if reply else state["question"],
        "messages": [HumanMessage(reply)] if reply else [],
    }
