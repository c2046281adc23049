"""Running the served app under uvicorn: the app of ``mtrag-graph serve``'s options, in one process or in
``--workers N`` processes (uvicorn's), each running ``--threads`` turns at once.

Several instances (on one machine or several) share conversations through a PostgreSQL
``--checkpointer``. The options reach the worker processes as JSON (``MTRAG_SERVE_ARGS``: the parsed
command line, the preset and the Context's overrides), so each builds the same app with
``app_from_environment``, uvicorn's app factory.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.passages import read_passages
from mtrag_graph.serve.app import ServeConfig, create_app
from mtrag_graph.serve.http import HeadDeadlineProtocol

ARGS_VARIABLE = "MTRAG_SERVE_ARGS"
# Idle connections stay open longer than load balancers' usual idle timeout (60 s), so the balancer,
# not the server, closes them: no request is sent on a connection the server is closing.
KEEP_ALIVE_S = 75
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def allowed_hosts(options: argparse.Namespace) -> list[str]:
    """The Host header names to answer: as given, else the loopback names for a loopback bind."""
    if options.allowed_host:
        for name in options.allowed_host:
            # Starlette's TrustedHostMiddleware takes '*' or '*.domain' as wildcards, and asserts the rest
            if "*" in name[1:] or (name.startswith("*") and name != "*" and not name.startswith("*.")):
                raise SystemExit(
                    f"mtrag-graph serve: --allowed-host {name}: a wildcard is '*' (any) or '*.example.org'"
                )
        return list(options.allowed_host)
    try:
        loopback = ipaddress.ip_address(options.host.strip("[]")).is_loopback
    except ValueError:
        loopback = options.host == "localhost"
    return list(LOOPBACK_HOSTS) if loopback else []


def api_keys(options: argparse.Namespace) -> list[str]:
    """The keys of ``--api-key-file`` and ``$MTRAG_API_KEYS``."""
    keys = settings.api_keys()
    if options.api_key_file:
        try:
            lines = Path(options.api_key_file).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise SystemExit(
                f"mtrag-graph serve: --api-key-file: cannot read {options.api_key_file} ({error})"
            ) from None
        keys += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
        if not keys:
            raise SystemExit(f"mtrag-graph serve: --api-key-file: {options.api_key_file} holds no key")
    return keys


def build_app(options: argparse.Namespace, context: Context) -> FastAPI:
    """The app ``mtrag-graph serve``'s parsed options describe, answering with ``context``."""
    context.clarify = not options.no_clarify
    passages = None
    if options.passages:
        passages = read_passages(options.passages)
    else:
        context.index_dir = options.corpus
    config = ServeConfig(
        checkpointer=options.checkpointer,
        passages=passages,
        api_keys=api_keys(options),
        allowed_hosts=allowed_hosts(options),
        max_messages=options.max_messages_per_thread,
        max_threads=options.max_threads_per_key,
        cors_origins=options.cors_origin,
        retention_days=options.retention_days,
        threads=options.threads,
        max_body_bytes=options.max_body_bytes,
        max_message_chars=options.max_message_chars,
        pool_size=max(4, min(16, options.threads // 2)),
    )
    return create_app(config, context)


def app_from_environment() -> FastAPI:
    """uvicorn's app factory in each worker: the app of the options in ``MTRAG_SERVE_ARGS``."""
    arguments = settings.serve_args()
    if arguments is None:
        raise RuntimeError(
            f"${ARGS_VARIABLE} is not set: start the workers with mtrag-graph serve --workers N"
        )
    given = json.loads(arguments)
    context = Context.from_preset(given["preset"], **given["overrides"])
    return build_app(argparse.Namespace(**given["options"]), context)


def serve(options: argparse.Namespace, preset: str | None, overrides: dict[str, Any]) -> None:
    """Serve until stopped: the app of ``options`` with the Context of ``preset`` and ``overrides``."""
    server = {"host": options.host, "port": options.port, "log_level": "warning", "timeout_graceful_shutdown": 5,
              "timeout_keep_alive": KEEP_ALIVE_S, "http": HeadDeadlineProtocol}  # fmt: skip
    if options.workers > 1:
        # uvicorn starts the workers from a process of its own: each imports the factory above (a process
        # started as `python -m mtrag_graph` would run the command again in each spawned worker)
        given = {"options": vars(options), "preset": preset, "overrides": overrides}
        settings.set_serve_args(json.dumps(given))
        settings_text = json.dumps({k: v for k, v in server.items() if k != "http"})
        program = (
            "import json, sys, uvicorn; from mtrag_graph.serve.http import HeadDeadlineProtocol; "
            "uvicorn.run('mtrag_graph.serve.server:app_from_environment', factory=True, "
            "workers=int(sys.argv[1]), http=HeadDeadlineProtocol, **json.loads(sys.argv[2]))"
        )
        os.execv(sys.executable, [sys.executable, "-c", program, str(options.workers), settings_text])
    uvicorn.run(build_app(options, Context.from_preset(preset, **overrides)), **server)
