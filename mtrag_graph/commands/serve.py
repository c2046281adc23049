"""``mtrag-graph serve --passages FILE | --corpus INDEX``: the chat as a web page and an HTTP API.

One process by default; ``--workers N`` starts N processes (uvicorn's), each running ``--threads``
turns at once. Several instances (on one machine or several) share conversations through a PostgreSQL
``--checkpointer``. Settings reach the worker processes as the parsed command line (``MTRAG_SERVE_ARGS``,
JSON), so each builds the same app.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from mtrag_graph import settings
from mtrag_graph.commands.answer import add_model_options, context_from_args

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
    source.add_argument("--passages", help="JSON-lines passages ({document_id, title, text, url?, page?})")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
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
        "--api-key",
        action="append",
        default=[],
        help="refuse requests without this key (Authorization: Bearer KEY); repeat for several; "
        "also $MTRAG_API_KEYS (comma-separated). Each key sees only its own threads",
    )
    parser.add_argument(
        "--cors-origin", action="append", default=[], help="allow this origin (CORS is off unless given)"
    )
    parser.add_argument(
        "--retention-days", type=float, help="delete threads unused for this many days (checked hourly)"
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=64 * 1024, help="largest request body (413 above)"
    )
    parser.add_argument("--max-message-chars", type=int, default=4000, help="longest message (413 above)")
    parser.add_argument("--no-clarify", action="store_true", help="never ask clarifying questions")
    add_model_options(parser)


def build_app(args: argparse.Namespace):
    """The app the parsed command line describes (used by each worker process)."""
    from mtrag_graph.serve.app import ServeConfig, create_app
    from mtrag_graph.serve.sources import SourceCatalog, read_source_rows

    context = context_from_args(args)
    context.clarify = not args.no_clarify
    passages = None
    if args.passages:
        rows = read_source_rows(args.passages)
        passages = [{k: r[k] for k in ("document_id", "title", "text")} for r in rows]
        sources = SourceCatalog(rows)
    else:
        context.index_dir = args.corpus
        sources = SourceCatalog(index_dir=args.corpus)
    keys = [*args.api_key, *(k.strip() for k in os.environ.get("MTRAG_API_KEYS", "").split(",") if k.strip())]
    config = ServeConfig(
        checkpointer=args.checkpointer,
        passages=passages,
        sources=sources,
        api_keys=keys,
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
    return build_app(argparse.Namespace(**json.loads(os.environ[ARGS_VARIABLE])))


def run(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401 - only to say which extra is missing
        import uvicorn
    except ImportError as error:
        print(
            f"mtrag-graph serve needs the serve extra: pip install 'mtrag-graph[serve]' ({error})",
            file=sys.stderr,
        )
        return 2

    if not args.checkpointer.startswith(("postgres://", "postgresql://")):
        args.checkpointer = os.path.expanduser(args.checkpointer)
    print(f"serving on http://{args.host}:{args.port}/  (API docs: /docs)", file=sys.stderr, flush=True)
    if args.workers > 1:
        # uvicorn's own entry point starts the workers: each imports the factory above (a process started
        # as `python -m mtrag_graph` would run the command again in each spawned worker)
        os.environ[ARGS_VARIABLE] = json.dumps({k: v for k, v in vars(args).items() if k != "func"})
        command = [sys.executable, "-m", "uvicorn", "mtrag_graph.commands.serve:app_from_environment",
                   "--factory", "--workers", str(args.workers), "--host", args.host, "--port", str(args.port),
                   "--log-level", "warning", "--timeout-graceful-shutdown", "5",
                   "--timeout-keep-alive", str(KEEP_ALIVE_S)]  # fmt: skip
        os.execv(sys.executable, command)
    uvicorn.run(
        build_app(args), host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=5
    )
    return 0
