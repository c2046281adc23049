"""``mtrag-graph serve --passages FILE | --corpus INDEX``: the chat as a web page and an HTTP API.

One process by default; ``--workers N`` starts N processes (uvicorn's), each running ``--threads``
turns at once. Several instances (on one machine or several) share conversations through a PostgreSQL
``--checkpointer``. Settings reach the worker processes as the parsed command line (``MTRAG_SERVE_ARGS``,
JSON), so each builds the same app.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from pathlib import Path

from mtrag_graph import settings
from mtrag_graph.commands._options import add_model_options, context_from_args

ARGS_VARIABLE = "MTRAG_SERVE_ARGS"
# Idle connections stay open longer than load balancers' usual idle timeout (60 s), so the balancer,
# not the server, closes them: no request is sent on a connection the server is closing.
KEEP_ALIVE_S = 75


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
        help="answer requests whose Host header names NAME (repeat for several; '*': any). Default: "
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
    add_model_options(parser)


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def positive_days(text: str) -> float:
    days = float(text)
    if not days > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 days, not {text}")
    return days


def allowed_hosts(args: argparse.Namespace) -> list[str]:
    """The Host header names to answer: as given, else the loopback names for a loopback bind."""
    if args.allowed_host:
        return list(args.allowed_host)
    try:
        loopback = ipaddress.ip_address(args.host.strip("[]")).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    return list(LOOPBACK_HOSTS) if loopback else []


def api_keys(args: argparse.Namespace) -> list[str]:
    """The keys of ``--api-key-file`` and ``$MTRAG_API_KEYS``."""
    keys = settings.api_keys()
    if args.api_key_file:
        try:
            lines = Path(args.api_key_file).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise SystemExit(
                f"mtrag-graph serve: --api-key-file: cannot read {args.api_key_file} ({error})"
            ) from None
        keys += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
        if not keys:
            raise SystemExit(f"mtrag-graph serve: --api-key-file: {args.api_key_file} holds no key")
    return keys


def build_app(args: argparse.Namespace):
    """The app the parsed command line describes (used by each worker process)."""
    from mtrag_graph.passages import read_passages
    from mtrag_graph.serve.app import ServeConfig, create_app

    context = context_from_args(args)
    context.clarify = not args.no_clarify
    passages = None
    if args.passages:
        passages = read_passages(args.passages)
    else:
        context.index_dir = args.corpus
    config = ServeConfig(
        checkpointer=args.checkpointer,
        passages=passages,
        api_keys=api_keys(args),
        allowed_hosts=allowed_hosts(args),
        max_messages=args.max_messages_per_thread,
        max_threads=args.max_threads_per_key,
        cors_origins=args.cors_origin,
        retention_days=args.retention_days,
        threads=args.threads,
        max_body_bytes=args.max_body_bytes,
        max_message_chars=args.max_message_chars,
        pool_size=max(4, min(16, args.threads // 2)),
    )
    return create_app(config, context)


def app_from_environment():
    """uvicorn's app factory in each worker: the app of the settings in ``MTRAG_SERVE_ARGS``."""
    arguments = settings.serve_args()
    if arguments is None:
        raise RuntimeError(
            f"${ARGS_VARIABLE} is not set: start the workers with mtrag-graph serve --workers N"
        )
    return build_app(argparse.Namespace(**json.loads(arguments)))


def run(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401 - only to say which extra is missing
        import uvicorn

        from mtrag_graph.serve.http import HeadDeadlineProtocol
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
    server = {"host": args.host, "port": args.port, "log_level": "warning", "timeout_graceful_shutdown": 5,
              "timeout_keep_alive": KEEP_ALIVE_S, "http": HeadDeadlineProtocol}  # fmt: skip
    if args.workers > 1:
        # uvicorn starts the workers from a process of its own: each imports the factory below (a process
        # started as `python -m mtrag_graph` would run the command again in each spawned worker)
        settings.set_serve_args(json.dumps({k: v for k, v in vars(args).items() if k != "func"}))
        settings_text = json.dumps({k: v for k, v in server.items() if k != "http"})
        program = (
            "import json, sys, uvicorn; from mtrag_graph.serve.http import HeadDeadlineProtocol; "
            "uvicorn.run('mtrag_graph.commands.serve:app_from_environment', factory=True, "
            "workers=int(sys.argv[1]), http=HeadDeadlineProtocol, **json.loads(sys.argv[2]))"
        )
        os.execv(sys.executable, [sys.executable, "-c", program, str(args.workers), settings_text])
    uvicorn.run(build_app(args), **server)
    return 0
