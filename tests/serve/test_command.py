"""``mtrag-graph serve`` as a person starts it: a process of its own, models behind an OpenAI-compatible
endpoint (the stand-in), SQLite by default, and two instances sharing PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from mtrag_graph.settings import REPO
from mtrag_graph.testing.standin import StandInServer
from tests.serve.sse import read_events

EXAMPLE = REPO / "examples" / "passages.jsonl"
START_S = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stand_in_models(endpoint: str) -> list[str]:
    spec = f"vllm:stand-in@{endpoint}"
    return ["--small-model", spec, "--large-model", spec, "--reranker", "lexical", "--embedder", "hashing:64"]


@contextmanager
def serve_process(checkpointer: str, *options: str) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    command = [sys.executable, "-m", "mtrag_graph", "serve", "--passages", str(EXAMPLE), "--port", str(port),
               "--checkpointer", checkpointer, *options]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert process.poll() is None, "mtrag-graph serve exited"
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "mtrag-graph serve did not start"
            time.sleep(0.2)
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = StandInServer(latency_s=0.0, max_requests=500, idle_exit_s=120).start()
    yield server.base_url
    server.shutdown()


def turn(url: str, thread_id: str, text: str, after: int) -> dict:
    with httpx.stream("POST", f"{url}/api/threads/{thread_id}/messages", json={"text": text, "after": after},
                      timeout=60) as response:  # fmt: skip
        assert response.status_code == 200
        found = read_events(response.iter_lines())
    kind, data = found[-1]
    assert kind == "done", found
    assert "".join(d["text"] for k, d in found if k == "text") == data["answer"]
    return data


def test_the_serve_command_serves_the_page_the_api_and_answers_through_an_endpoint(tmp_path, endpoint):
    with serve_process(str(tmp_path / "chat.sqlite"), *stand_in_models(endpoint)) as (url, _):
        assert "<title>mtrag-graph</title>" in httpx.get(url + "/").text
        assert "/api/threads/{thread_id}/messages" in httpx.get(url + "/openapi.json").json()["paths"]
        thread_id = httpx.post(url + "/api/threads", json={}).json()["thread_id"]
        done = turn(url, thread_id, "How do honey bees tell each other where flowers are?", 0)
        assert done["turns"] == 2 and done["answer"]


def test_two_instances_on_one_postgresql_continue_each_others_threads(endpoint, postgres_url):
    pytest.importorskip("langgraph.checkpoint.postgres")
    models = stand_in_models(endpoint)
    with (
        serve_process(postgres_url, *models) as (first, process),
        serve_process(postgres_url, *models, "--workers", "2") as (second, _),
    ):
        assert httpx.get(second + "/health").json()["checkpointer"] == "postgres"
        thread_id = httpx.post(first + "/api/threads", json={}).json()["thread_id"]
        turn(first, thread_id, "How do honey bees tell each other where flowers are?", 0)
        process.kill()  # the first instance is gone; the second has the thread
        process.wait()
        done = turn(second, thread_id, "How long do the workers live?", 2)
        saved = httpx.get(f"{second}/api/threads/{thread_id}").json()
    assert done["turns"] == 4 and [t["speaker"] for t in saved["turns"]] == ["user", "agent"] * 2


@pytest.mark.slow
def test_the_serve_command_answers_with_the_bundled_local_models(tmp_path):
    """The default models (llama.cpp, MiniLM): one real turn through the served API."""
    with serve_process(str(tmp_path / "chat.sqlite"), "--no-clarify") as (url, _):
        thread_id = httpx.post(url + "/api/threads", json={}).json()["thread_id"]
        body = {"text": "How do honey bees tell each other where the flowers are?", "after": 0}
        with httpx.stream(
            "POST", f"{url}/api/threads/{thread_id}/messages", json=body, timeout=600
        ) as response:
            found = read_events(response.iter_lines())
    kind, done = found[-1]
    assert kind == "done" and done["answer"]
    assert "".join(d["text"] for k, d in found if k == "text") == done["answer"]
    if not done["idk"]:
        assert done["sources"] and done["sources"][0]["document_id"].startswith("bees")
