"""``mtrag-graph migrate-threads CHECKPOINTER``: rewrite, at once, every thread a release before issue 48
stored, as the served page and the terminal chat would on its first read (``runtime.checkpoints``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "migrate-threads",
        help="rewrite the threads an older release stored (they are otherwise rewritten on first read)",
        description="Rewrite every thread of a checkpointer that a release before the one graph stored "
        "(the served chat's or the terminal chat's) as the graph's thread; threads already the graph's "
        "are left as they are, so running it again rewrites none. Stop the servers that use it first.",
    )
    parser.add_argument("checkpointer", help="SQLite file or postgresql:// connection string")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.graph import build_graph
    from mtrag_graph.runtime.checkpoints import migrate_threads, open_checkpointer

    target = args.checkpointer
    postgres = target.startswith(("postgres://", "postgresql://"))
    if not postgres and not Path(target).expanduser().is_file():
        print(f"mtrag-graph migrate-threads: no such file: {target}", file=sys.stderr)
        return 2
    with open_checkpointer(target) as saver:
        rewritten, threads = migrate_threads(build_graph(checkpointer=saver))
    print(f"migrated {rewritten} of {threads} threads ({threads - rewritten} were the graph's already)")
    return 0
