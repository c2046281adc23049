"""Conversation memory: a chat graph that keeps the conversation in a checkpointer, one thread per chat.

Each user turn is appended to ``turns``; the ``respond`` node runs the answering graph on the whole
conversation and appends the agent's reply. With ``Context(clarify=True)`` the clarify node asks the
user back (an ``interrupt``) when a turn is unclear. With a checkpointer, the
conversation of a ``thread_id`` survives restarts::

    with open_checkpointer("chat.sqlite") as saver:
        chat = build_chat_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "demo"}}
        state = chat.invoke(user_turn("How do bees find flowers?", passages), config, context=Context(clarify=True))
        if pending_question(state):          # the clarify node asked back (interrupt)
            state = chat.invoke(Command(resume="the honey bee"), config, context=Context(clarify=True))
        print(state["turns"][-1]["text"])
"""

from __future__ import annotations

import dataclasses
import json
import operator
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict  # pydantic's JSON schemas need it on Python < 3.12

from mtrag_graph.citations import CitedAnswer
from mtrag_graph.context import Context
from mtrag_graph.graph import Insertion, build_graph
from mtrag_graph.runtime.bookkeeping import route_of


class ChatState(TypedDict, total=False):
    turns: Annotated[list[dict[str, str]], operator.add]  # the whole conversation, {"speaker", "text"}
    passages: list[dict[str, Any]] | None  # fixed passages; None: retrieve from Context.index_dir
    route: dict[str, Any]  # the decisions behind the last answer
    # the last answer's sentences with their passages and those passages' origins (CitedAnswer.record)
    citations: dict[str, Any]


def user_turn(text: str, passages: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The chat graph's input for one user turn."""
    return {
        "turns": [{"speaker": "user", "text": text}],
        "passages": None if passages is None else list(passages),
    }


def pending_question(state: dict[str, Any]) -> str | None:
    """The clarifying question the run is waiting on (an ``interrupt``), if any."""
    for pending in state.get("__interrupt__", ()) or ():
        value = getattr(pending, "value", pending)
        if isinstance(value, dict) and value.get("clarifying_question"):
            return str(value["clarifying_question"])
    return None


def snapshot_question(snapshot: Any) -> str | None:
    """The clarifying question a saved thread waits on (``graph.get_state(config)``), if any."""
    return pending_question({"__interrupt__": [i for task in snapshot.tasks for i in task.interrupts]})


def build_chat_graph(*, checkpointer: Any = None, insert: Sequence[Insertion] = (), name: str = "mtrag-chat"):
    """The chat graph; the answering graph (with ``insert``, see ``build_graph``) runs inside ``respond``.

    The answering graph is called from the node, so it shares the chat's checkpointer and thread:
    its ``interrupt()`` pauses the chat, and ``Command(resume=...)`` on the chat resumes it.
    """
    answering = build_graph(insert=insert, output="state")

    def respond(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
        turns = state["turns"]
        number = sum(turn["speaker"] == "user" for turn in turns)
        task: dict[str, Any] = {"task_id": f"chat<::>{number}", "input": turns}
        if state.get("passages") is not None:
            task["contexts"] = state["passages"]
        # In chat the clarify node asks the user (interrupt) instead of answering with its question.
        context = dataclasses.replace(runtime.context or Context(), clarify_interrupt=True)
        result = answering.invoke({"task": task}, context=context)
        new_turns = []
        clarification = result.get("clarification") or {}
        if clarification.get("reply"):
            new_turns += [{"speaker": "agent", "text": clarification["question"]},
                          {"speaker": "user", "text": clarification["reply"]}]  # fmt: skip
        new_turns.append({"speaker": "agent", "text": result["answer"]})
        # the cited sentences, and each kept passage's origin (a document's file, page and section; a URL)
        citations = CitedAnswer.of(result).record()
        return {"turns": new_turns, "route": route_of(result), "citations": citations}

    builder = StateGraph(ChatState, context_schema=Context)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name=name)


@contextmanager
def open_checkpointer(target: str | Path) -> Iterator[Any]:
    """A checkpointer: PostgreSQL for a ``postgresql://`` connection string, else a SQLite file."""
    text = str(target)
    if text.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver  # noqa: PLC0415 - optional (the postgres extra)
        except ImportError as error:
            raise RuntimeError(
                "PostgreSQL needs the postgres extra: pip install 'mtrag-graph[postgres]'"
            ) from error
        with PostgresSaver.from_conn_string(text) as saver:
            saver.setup()
            yield saver
        return

    Path(text).expanduser().parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(Path(text).expanduser(), check_same_thread=False)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


SOURCE_FIELDS = ("url", "page", "section", "file", "source")  # where a passage comes from, kept when given


def read_passages(path: str | Path) -> list[dict[str, Any]]:
    """Passages from a JSON-lines file: ``{"document_id" | "_id", "title", "text"}`` per line, with
    their origin (``SOURCE_FIELDS``) when the line has it."""
    passages = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise ValueError(f"{path}, line {number}: expected an object with a 'text' string")
            passages.append({"document_id": str(row.get("document_id", row.get("_id", f"passage-{number}"))),
                             "title": row.get("title") or "", "text": row["text"],
                             **{key: row[key] for key in SOURCE_FIELDS if row.get(key) not in (None, "")}})  # fmt: skip
    return passages
