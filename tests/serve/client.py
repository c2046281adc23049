"""A served app in the test process: the real ASGI app and checkpointer, scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage

from mtrag_graph.serve.app import ServeConfig, create_app
from tests.serve.fakes import PASSAGES, serve_context


def serve_config(checkpointer: str, **overrides: Any) -> ServeConfig:
    return ServeConfig(checkpointer=checkpointer, passages=[dict(p) for p in PASSAGES], **overrides)


@contextmanager
def served(checkpointer: str, context: Any = None, **overrides: Any) -> Iterator[TestClient]:
    app = create_app(serve_config(checkpointer, **overrides), context or serve_context())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def events(client: TestClient, thread_id: str, text: str, after: int | None = None, **headers: str):
    """The server-sent events of one message, as (kind, data) pairs."""
    body: dict[str, Any] = {"text": text} if after is None else {"text": text, "after": after}
    with client.stream("POST", f"/api/threads/{thread_id}/messages", json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join(response.iter_text())
    found = []
    for block in raw.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def user_message(service: Any, text: str) -> dict[str, Any]:
    """The graph's input for one message of a served thread, as the service sends it."""
    return {"messages": [HumanMessage(text)], "contexts": service.config.passages}
