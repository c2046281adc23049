"""``mtrag-graph`` command line: one subcommand per module in ``mtrag_graph.commands``.

Each command module defines ``register(subparsers)``, which adds its parser and sets ``func``
(a callable taking the parsed args and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from mtrag_graph import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mtrag-graph", description="Multi-turn RAG as a LangGraph state machine (MTRAG benchmark tools)."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        importlib.import_module(f"{commands.__name__}.{module.name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.DEBUG if args.verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)  # a library that sets its own logger to DEBUG (bm25s) stays quiet too
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
