"""``mtrag-graph serve --passages FILE | --corpus INDEX``: the chat as a web page and an HTTP API.

This module parses the command line and checks it; ``serve/server.py`` builds the app and runs it under
uvicorn (one process, or ``--workers N``).
"""

from __future__ import annotations

import argparse
import os
import sys

from mtrag_graph import settings
from mtrag_graph.commands._options import add_model_options, add_preset_option, overrides_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the chat: a web page at / and an HTTP API (threads, streamed answers)",
        description="Serve conversations over passages (--passages) or an index (--corpus): the page at /, "
        "the API under /api (OpenAPI at /docs), /health. Threads persist in --checkpointer.",
    )
    add_serve_options(parser)
    parser.set_defaults(func=run)


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help="index folder: retrieve passages for each turn")
    source.add_argument(
        "--passages", help="JSON-lines passages ({document_id, title, text, file?, page?, section?, url?})"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME",
        help="answer requests whose Host header names NAME (repeat for several; '*': any; '*.example.org': "
        "its subdomains). Default: "
        "localhost, 127.0.0.1 and [::1] when --host is a loopback address (a web page cannot reach the "
        "API through DNS rebinding), any otherwise: give the public name behind a proxy",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--checkpointer",
        default=settings.checkpointer(),
        help="SQLite file or postgresql:// connection string (several instances: PostgreSQL) "
        f"(default: $MTRAG_CHECKPOINTER or {settings.DEFAULT_CHECKPOINTER})",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--threads", type=int, default=32, help="turns answered at once per process (default 32)"
    )
    parser.add_argument(
        "--api-key-file",
        metavar="FILE",
        help="refuse requests without one of the keys in FILE (one per line; Authorization: Bearer KEY); "
        "also $MTRAG_API_KEYS (comma-separated). Each key sees only its own threads",
    )
    parser.add_argument("--api-key", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument(
        "--cors-origin", action="append", default=[], help="allow this origin (CORS is off unless given)"
    )
    parser.add_argument(
        "--retention-days",
        type=positive_days,
        help="delete threads unused for this many days (checked hourly; more than 0)",
    )
    parser.add_argument(
        "--max-messages-per-thread",
        type=int,
        default=100,
        help="messages a user sends in one thread; more get 409 (default 100)",
    )
    parser.add_argument(
        "--max-threads-per-key",
        type=int,
        default=1000,
        help="threads one API key keeps (everyone's, without keys); more get 409 (default 1000)",
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=64 * 1024, help="largest request body (413 above)"
    )
    parser.add_argument("--max-message-chars", type=int, default=4000, help="longest message (413 above)")
    parser.add_argument("--no-clarify", action="store_true", help="never ask clarifying questions")
    add_preset_option(parser)
    add_model_options(parser)


def positive_days(text: str) -> float:
    days = float(text)
    if not days > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 days, not {text}")
    return days


def run(args: argparse.Namespace) -> int:
    try:
        from mtrag_graph.serve.server import allowed_hosts, api_keys, serve
    except ImportError as error:
        print(
            f"mtrag-graph serve needs the serve extra: pip install 'mtrag-graph[serve]' ({error})",
            file=sys.stderr,
        )
        return 2

    if args.api_key:
        print(
            "mtrag-graph serve: --api-key shows the key to anyone who lists processes (ps): put the keys in "
            "a file (--api-key-file FILE, one per line) or in $MTRAG_API_KEYS",
            file=sys.stderr,
        )
        return 2
    if not args.checkpointer.startswith(("postgres://", "postgresql://")):
        args.checkpointer = os.path.expanduser(args.checkpointer)
    api_keys(args)  # an unreadable key file stops here, not in each worker
    if not allowed_hosts(args):
        print(
            f"mtrag-graph serve: Host headers are not checked on {args.host}: give --allowed-host NAME "
            "(the name clients use) to refuse others",
            file=sys.stderr,
        )
    print(f"serving on http://{args.host}:{args.port}/  (API docs: /docs)", file=sys.stderr, flush=True)
    options = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "func"})
    serve(options, getattr(args, "preset", None), overrides_from_args(args))
    return 0
