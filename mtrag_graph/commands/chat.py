"""``mtrag-graph chat --passages FILE | --corpus INDEX_DIR [--thread ID]``: a terminal chat over the graph.

The conversation is kept in a checkpointer (a SQLite file by default, PostgreSQL with
``--checkpointer postgresql://...``): starting again with the same ``--thread`` continues it.
"""

from __future__ import annotations

import argparse
import os
import uuid
from typing import Any

from mtrag_graph.commands.answer import add_model_options, context_from_args

DEFAULT_DB = os.path.join("~", ".mtrag-graph", "chat.sqlite")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat in the terminal; the conversation persists per thread",
        description="Chat over passages (--passages) or an index (--corpus). Each turn is answered by the "
        "graph from the whole conversation; the conversation is saved under --thread and continues when "
        "you start again with the same thread. Type /quit (or end the input) to leave.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", dest="corpus", help="index folder: retrieve passages for each turn")
    source.add_argument("--passages", help="JSON-lines passages ({document_id, title, text}) to answer from")
    parser.add_argument("--thread", help="conversation id (default: a new one, printed)")
    parser.add_argument(
        "--checkpointer",
        default=os.environ.get("MTRAG_CHECKPOINTER") or DEFAULT_DB,
        help=f"SQLite file or postgresql:// connection string (default: $MTRAG_CHECKPOINTER or {DEFAULT_DB})",
    )
    parser.add_argument("--no-clarify", action="store_true", help="never ask clarifying questions")
    parser.add_argument("--trace-file", help="append each turn's run tree here (JSON lines)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def run(args: argparse.Namespace) -> int:
    from langgraph.types import Command

    from mtrag_graph.chat import (
        build_chat_graph,
        open_checkpointer,
        pending_question,
        read_passages,
        user_turn,
    )
    from mtrag_graph.tracing import tracing_callbacks

    context = context_from_args(args)
    context.clarify = not args.no_clarify
    if args.corpus:
        context.index_dir = args.corpus
    passages = read_passages(args.passages) if args.passages else None
    thread = args.thread or uuid.uuid4().hex[:12]
    config = {"configurable": {"thread_id": thread}, "callbacks": tracing_callbacks(args.trace_file)}
    with open_checkpointer(args.checkpointer) as saver:
        chat = build_chat_graph(checkpointer=saver)
        saved = chat.get_state(config)
        turns = (saved.values or {}).get("turns", [])
        print(f"thread {thread}: {'continuing, ' + str(len(turns)) + ' turns so far' if turns else 'new'}")
        for turn in turns:
            print(f"{'you' if turn['speaker'] == 'user' else 'bot'}> {turn['text']}")
        waiting = next((i.value.get("clarifying_question") for t in saved.tasks for i in t.interrupts), None)
        while True:
            text = _read("you> ")
            if text is None or text.strip() in ("/quit", "/exit"):
                return 0
            if not text.strip():
                continue
            inputs: Any = Command(resume=text.strip()) if waiting else user_turn(text.strip(), passages)
            state = chat.invoke(inputs, config, context=context)
            waiting = pending_question(state)
            reply = waiting or state["turns"][-1]["text"]
            print(f"bot> {reply}", flush=True)
