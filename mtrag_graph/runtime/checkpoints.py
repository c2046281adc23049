"""Where conversations are kept: a checkpointer per deployment, a thread per conversation.

``open_checkpointer`` opens a SQLite file or PostgreSQL. The served page and the terminal ``chat``
keep their threads there with the one graph (``graph.build_graph(checkpointer=...)``: ``messages`` in,
the cited reply out, a clarifying question as an interrupt), as any LangGraph server would.

Releases before issue 48 stored a conversation through a second graph whose state was ``turns``
(``{"speaker", "text"}``), the given ``passages``, the last answer's ``route`` and ``citations``, with
a clarifying question pending inside that graph's ``respond`` node. ``migrate_thread`` rewrites such
a thread as the one graph's, the first time it is read (or all of them at once: ``migrate_threads``,
``mtrag-graph migrate-threads``): the turns as messages, the last answer's
citations in its reply's metadata (with the passages' text when the thread kept the passages), and a
pending clarifying question as the one graph's interrupt, so the user's reply resumes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from mtrag_graph.state import state_keys


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


def pending_question(values: Mapping[str, Any]) -> str | None:
    """The clarifying question a run stopped on (its ``__interrupt__``), if any."""
    for pending in values.get("__interrupt__", ()) or ():
        value = getattr(pending, "value", pending)
        if isinstance(value, Mapping) and value.get("clarifying_question"):
            return str(value["clarifying_question"])
    return None


def snapshot_question(snapshot: Any) -> str | None:
    """The clarifying question a saved thread waits on (``graph.get_state(config)``), if any."""
    return pending_question({"__interrupt__": list(snapshot.interrupts)})


# -- threads stored before issue 48 ------------------------------------------------------------------


def _stored_values(saver: Any, thread_id: str) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The old chat graph's values of ``thread_id`` and, when it waits on a clarifying reply, the values
    of the answering run that asked; None when the thread is not one the old chat graph stored."""
    head = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if head is None:
        return None
    values = head.checkpoint.get("channel_values") or {}
    if "turns" not in values or "messages" in values:
        return None
    asking = None
    if not (values["turns"] and values["turns"][-1]["speaker"] == "agent"):
        runs = [c for c in saver.list({"configurable": {"thread_id": thread_id}})
                if c.config["configurable"].get("checkpoint_ns", "").startswith("respond:")]  # fmt: skip
        if runs:
            latest = max(runs, key=lambda c: c.checkpoint["id"])
            asking = dict(latest.checkpoint.get("channel_values") or {})
    return dict(values), asking


def _messages(turns: list[Mapping[str, str]]) -> list[AnyMessage]:
    return [
        (HumanMessage if turn["speaker"] == "user" else AIMessage)(turn["text"], id=f"turn-{i}")
        for i, turn in enumerate(turns)
    ]


def _last_reply_metadata(values: Mapping[str, Any], task_id: str) -> dict[str, Any]:
    """The last answer's ``ReplyMetadata`` from the old ``route`` and ``citations``; a cited passage's
    text from the passages the thread kept (a retrieved one's was never stored: left empty)."""
    route, record = values.get("route") or {}, values.get("citations") or {}
    given = {str(p.get("document_id")): p for p in values.get("passages") or []}
    sources = []
    for origin in record.get("passages") or []:
        found = given.get(str(origin.get("document_id"))) or {}
        sources.append({**origin, "text": str(found.get("text") or ""),
                        **{k: v for k, v in found.items() if k not in origin and k != "text"}})  # fmt: skip
    abstained = bool(route.get("abstained"))
    return {
        "task_id": task_id,
        "kind": "abstention" if abstained else "answer",
        "abstain_reason": route.get("abstain_reason"),
        "citations": list(record.get("sentences") or []),
        "sources": sources,
    }


def migrate_thread(graph: Any, config: Mapping[str, Any]) -> bool:
    """Rewrite the thread of ``config`` as ``graph``'s when the old chat graph stored it (see the module's
    docstring); True when it did. ``graph`` is ``build_graph(checkpointer=...)``."""
    saver = graph.checkpointer
    thread_id = str(config["configurable"]["thread_id"])
    stored = _stored_values(saver, thread_id)
    if stored is None:
        return False
    values, asking = stored
    turns = list(values["turns"])
    messages = _messages(turns)
    users = sum(turn["speaker"] == "user" for turn in turns)
    task_id = f"{thread_id}<::>{users}"
    # written over the old head, which stays until this succeeds (the graph reads none of its
    # channels but "passages", set here); the old run's own checkpoints go at the next prune
    config = {"configurable": {"thread_id": thread_id}}
    if asking is not None and (asking.get("clarification") or {}).get("asked"):
        question = asking["clarification"]["question"]
        reply = AIMessage(question, id=f"turn-{len(turns)}", response_metadata={"mtrag": {
            "task_id": task_id, "kind": "clarifying_question", "abstain_reason": None,
            "citations": [], "sources": []}})  # fmt: skip
        keys = set(state_keys()) - {"messages", "contexts", "task", "task_id", "from_messages"}
        update = {key: value for key, value in asking.items() if key in keys}
        update.update(messages=[*messages, reply], contexts=values.get("passages"), task_id=task_id,
                      from_messages=True, answer="")  # fmt: skip
        # the state the answering run had when it asked, with ask_user next (finish routes to no other
        # node); ask_user asks the stored question (no model call), and the thread waits on the reply
        graph.update_state(config, Command(update=update, goto="ask_user"), as_node="finish")
        graph.invoke(None, config)
        return True
    inputs = {"messages": messages, "contexts": values.get("passages")}
    if messages and isinstance(messages[-1], HumanMessage):  # a turn a stopped process never answered
        graph.update_state(config, inputs, as_node="__start__")  # the next run answers it
        return True
    if messages:
        messages[-1].response_metadata = {"mtrag": _last_reply_metadata(values, task_id)}
    graph.update_state(config, {**inputs, "passages": None}, as_node="finish")
    return True


def migrate_threads(graph: Any) -> tuple[int, int]:
    """Rewrite every thread of ``graph``'s checkpointer that the old chat graph stored (``migrate_thread``
    each); (threads rewritten, threads held). Idempotent: a second call rewrites none."""
    saver = graph.checkpointer
    thread_ids = sorted({str(c.config["configurable"]["thread_id"]) for c in saver.list(None)})
    rewritten = sum(
        migrate_thread(graph, {"configurable": {"thread_id": thread_id}}) for thread_id in thread_ids
    )
    return rewritten, len(thread_ids)
