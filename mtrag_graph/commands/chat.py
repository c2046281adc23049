"""``mtrag-graph chat --passages FILE | --corpus INDEX_DIR [--thread ID]``: a terminal chat over the graph.

The chat drives the one graph (``graph.build_graph``, what ``langgraph.json`` serves): each line is a
``HumanMessage``, each answer the cited reply ``AIMessage``, a clarifying question an interrupt that
the next line answers. The conversation is kept in a checkpointer (a SQLite file by default,
PostgreSQL with ``--checkpointer postgresql://...``): starting again with the same ``--thread``
continues it (a thread an older release stored is rewritten first: ``runtime.checkpoints``).

While a turn runs, a status line names the step the graph is in (rewriting, retrieving, checking the
passages, writing); the answer is printed as its sentences pass the checks (only text that stands:
``mtrag_graph.nodekit.release``), then with a marker per sentence ([1], [2]: the passages that support
it) and where those passages come from (title, or file and page) under it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from mtrag_graph import settings
from mtrag_graph.commands._options import add_model_options, add_preset_option, context_from_args

if TYPE_CHECKING:
    from mtrag_graph.citations import CitedAnswer


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
        default=settings.checkpointer(),
        help=f"SQLite file or postgresql:// connection string (default: $MTRAG_CHECKPOINTER or {settings.DEFAULT_CHECKPOINTER})",
    )
    parser.add_argument("--no-clarify", action="store_true", help="never ask clarifying questions")
    parser.add_argument("--trace-file", help="append each turn's run tree here (JSON lines)")
    add_preset_option(parser)
    add_model_options(parser)
    parser.set_defaults(func=run)


BOT = "bot> "


class TurnPrinter:
    """Prints one turn: the status line (the stages' labels), the answer text that stands as it comes,
    then its cited form and sources.

    Only text that stands reaches it (``runtime.streaming.iter_events``). A retraction (rare) erases the
    shown text on a terminal; elsewhere (a pipe, a file) nothing can be erased, so the answer is
    printed only when the turn ends: withdrawn text is never printed.
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.status = ""
        self.streamed = ""  # the answer text printed so far

    def _clear_status(self) -> None:
        if self.status:
            self.out.write("\r\033[K" if self.tty else "")
            self.status = ""

    def step(self, label: str) -> None:
        if self.streamed or label == self.status:
            return
        self.status = label
        # one line, rewritten in place on a terminal; one line per step elsewhere
        self.out.write(f"\r\033[K... {label}" if self.tty else f"... {label}\n")
        self.out.flush()

    def text(self, text: str) -> None:
        if not self.tty:
            return
        if not self.streamed:
            self._clear_status()
            self.out.write(BOT)
        self.streamed += text
        self.out.write(text)
        self.out.flush()

    def retract(self) -> None:
        """Erase the shown answer (a terminal only shows any)."""
        if self.streamed:
            up = self._rows(BOT + self.streamed) - 1
            self.out.write("\r" + (f"\033[{up}A" if up else "") + "\033[J")
            self.out.flush()
            self.streamed = ""

    def _rows(self, text: str) -> int:
        """The terminal rows ``text`` takes (its lines wrapped at the terminal's width)."""
        try:
            columns = os.get_terminal_size(self.out.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = shutil.get_terminal_size().columns
        columns = max(columns, 1)
        return sum(max(1, -(-len(line) // columns)) for line in text.split("\n"))

    def finish(self, cited: CitedAnswer) -> None:
        """The final answer, cited (in place of the streamed text on a terminal); then the sources."""
        self._clear_status()
        # the streamed text is the final answer (what stands): its cited form is written over it
        self.retract()
        self.out.write(f"{BOT}{cited.text}\n")
        for source in cited.sources:
            self.out.write(f"     [{source.number}] {source.label}\n")
        self.out.flush()


def stream_turn(
    graph: Any, inputs: Any, config: Mapping[str, Any], context: Any, out: TextIO
) -> dict[str, Any]:
    """Run one turn of the thread streamed to ``out``; returns the run's final values, with the
    clarifying question it waits on as ``waiting`` (None when it answered)."""
    from mtrag_graph.citations import CitedAnswer
    from mtrag_graph.runtime.streaming import iter_events

    printer = TurnPrinter(out)
    waiting, values = None, {}
    for kind, value in iter_events(graph, inputs, context=context, config=config):
        if kind == "step":
            printer.step(value)
        elif kind == "text":
            printer.text(value)
        elif kind == "retract":
            printer.retract()
        elif kind == "interrupt":
            waiting = value
        else:
            values = value
    reply = values["messages"][-1]
    printer.finish(CitedAnswer(str(waiting), [], []) if waiting else CitedAnswer.of_reply(reply))
    return {**values, "waiting": waiting}


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def run(args: argparse.Namespace) -> int:
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Command

    from mtrag_graph.graph import build_graph
    from mtrag_graph.passages import read_passages
    from mtrag_graph.runtime.checkpoints import migrate_thread, open_checkpointer, snapshot_question
    from mtrag_graph.runtime.tracing import tracing_callbacks

    settings.quiet_hub()
    context = context_from_args(args, clarify=not args.no_clarify, index_dir=args.corpus)
    passages = read_passages(args.passages) if args.passages else None
    thread = args.thread or uuid.uuid4().hex[:12]
    config: RunnableConfig = {
        "configurable": {"thread_id": thread},
        "callbacks": tracing_callbacks(args.trace_file),
    }
    with open_checkpointer(args.checkpointer) as saver:
        graph = build_graph(checkpointer=saver)
        migrate_thread(graph, config)
        saved = graph.get_state(config)
        messages = (saved.values or {}).get("messages", [])
        print(
            f"thread {thread}: {'continuing, ' + str(len(messages)) + ' turns so far' if messages else 'new'}"
        )
        for message in messages:
            print(f"{'you' if isinstance(message, HumanMessage) else 'bot'}> {message.text}")
        waiting = snapshot_question(saved)
        while True:
            text = _read("you> ")
            if text is None or text.strip() in ("/quit", "/exit"):
                return 0
            if not text.strip():
                continue
            inputs: Any = (
                Command(resume=text.strip())
                if waiting
                else {"messages": [HumanMessage(text.strip())], "contexts": passages}
            )
            waiting = stream_turn(graph, inputs, config, context, sys.stdout)["waiting"]
