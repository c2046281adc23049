"""Validate the caller's input into the fields the graph works on, and start the run afresh.

Two inputs, one pipeline: ``messages`` (a conversation, the last message the user's question; a thread
keeps it, so each run sends only the new message) with the passages in ``contexts``, or one MTRAG
``task`` dict (the benchmark's input). The messages are turned into the same task a benchmark run
reads, so everything after this node is the same for both. The run's reply is added to ``messages`` either
way (``nodes/finish.py``); a task's own conversation is not (it comes whole with every task).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import uuid4

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.config import get_config
from langgraph.types import Overwrite

from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import State, accumulated_keys, run_keys
from mtrag_graph.tasks import TaskError, parse_task

CONVERSATION_TASK = "conversation"  # the task_id prefix of a run over ``messages`` outside a thread


def message_text(message: AnyMessage) -> str:
    """A message's text: its string content, or the text blocks of a list content (chat UIs send both)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in content
        if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
    )


def task_of_messages(
    messages: Sequence[AnyMessage], contexts: Any, conversation: str = CONVERSATION_TASK
) -> dict[str, Any]:
    """The MTRAG task a conversation asks: its turns (``HumanMessage`` the user's, ``AIMessage`` the
    agent's) and ``contexts`` as the task's passages (``None``: retrieve them). Its id is
    ``conversation<::>N`` for the N-th user message, as MTRAG numbers a conversation's turns."""
    number = sum(isinstance(m, HumanMessage) for m in messages)
    label = f"{conversation}<::>{number}"
    turns = []
    for i, message in enumerate(messages):
        if isinstance(message, HumanMessage):
            speaker = "user"
        elif isinstance(message, AIMessage):
            speaker = "agent"
        else:
            raise TaskError(
                label, f"messages[{i}]", f"expected a human or an AI message, got a {message.type} message"
            )
        turns.append({"speaker": speaker, "text": message_text(message)})
    if not turns:
        raise TaskError(label, "messages", "no messages: send the user's question as a human message")
    task: dict[str, Any] = {"task_id": label, "input": turns}
    if contexts is not None:
        task["contexts"] = contexts
    return task


def asks_a_new_question(state: Mapping[str, Any]) -> bool:
    """Whether this run answers ``messages``: the last one is a user's message nobody answered yet (a
    ``task`` run adds only its reply to them)."""
    messages = state.get("messages") or []
    return bool(messages) and isinstance(messages[-1], HumanMessage)


def _cleared(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a thread's last run left in the keys a run writes: emptied (a fresh run has none)."""
    accumulated = set(accumulated_keys())
    cleared: dict[str, Any] = {}
    for key in run_keys():
        if state.get(key) in (None, [], {}):
            continue
        cleared[key] = Overwrite([]) if key in accumulated else None
    return cleared


@guarded
def load_task(state: State, runtime: Any) -> dict[str, Any]:
    from_messages = asks_a_new_question(state)
    if from_messages:
        thread = (get_config().get("configurable") or {}).get("thread_id")
        raw = task_of_messages(
            state.get("messages") or [], state.get("contexts"), str(thread or CONVERSATION_TASK)
        )
        try:
            task = parse_task(raw)
        except TaskError as error:  # the caller sent messages: name them, not the task built from them
            raise TaskError(error.task, error.field.replace("input", "messages"), error.message) from None
    else:  # a task holds its whole conversation: only the reply is added to messages (nodes/finish.py)
        task = parse_task(state.get("task"))
    # the task built from messages is not kept: the thread has its messages and contexts already, and
    # a served thread's passages would be stored three times in each checkpoint (serve/storage.py)
    return {
        **_cleared(state),
        "task_id": task.task_id,
        "reply_id": f"reply-{uuid4()}",
        "from_messages": from_messages,
        "history": [turn.model_dump() for turn in task.history],
        "question": task.question,
        "passages": None if task.passages is None else [dict(p) for p in task.passages],
        # the routers and the stream read these: each run starts them at their empty values
        "retries": 0,
        "abstain_reason": None,
        "error": None,
        "answer": "",
        "shown": "",
        "clarification": {},
        "answer_problems": [],
        "decline_retried": False,
        "decline_offered": True,
    }
