"""A real trace viewer: a graph run's spans arrive in a locally started Arize Phoenix over OTLP.

Phoenix runs from its own environment (``scripts/phoenix.sh`` makes ``.venv-phoenix``; its
dependencies conflict with the project's) as a server on loopback ports chosen here. The test skips,
saying why, only when Phoenix is not installed or does not start.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.tracing import instrument_opentelemetry, opentelemetry_provider
from mtrag_graph.testing import fake_context, make_task
from tests.conftest import REPO

PHOENIX = REPO / ".venv-phoenix" / "bin" / "phoenix"
PROJECT = "mtrag-graph-test"
STARTUP_S = 180  # a cold start migrates its SQLite database; slow on a busy 2-core machine
NODE_ORDER = [
    "load_task", "evidence_precheck", "global_rewrite", "classify_relation", "select_history",
    "local_rewrite", "rerank", "answerability_gate", "generate", "accept_answer",
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read() or b"{}")


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    if not PHOENIX.exists():
        pytest.skip(f"Phoenix is not installed at {PHOENIX} (scripts/phoenix.sh installs it)")
    port = _free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix")}  # fmt: skip
    log = tmp_path / "phoenix.log"
    with open(log, "w") as output:
        server = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if server.poll() is not None:
                pytest.skip(f"Phoenix exited at start: {log.read_text()[-500:]}")
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.skip(f"Phoenix did not answer within {STARTUP_S} s: {log.read_text()[-500:]}")
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def _spans(url: str) -> list[dict]:
    try:
        return _get(f"{url}/v1/projects/{PROJECT}/spans?limit=1000").get("data", [])
    except urllib.error.HTTPError as error:
        if error.code == 404:  # the project appears with its first span
            return []
        raise


@pytest.mark.slow
def test_a_graph_run_shows_up_in_a_locally_started_phoenix(phoenix):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415 - optional (the otel extra)

    exporter = OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces")
    provider = opentelemetry_provider(exporter, service="mtrag-graph", project=PROJECT)
    instrumentor = instrument_opentelemetry(provider)
    task = make_task(["How do bees talk?", "They dance.", "How do they find flowers?"],
                     ["Bees use the waggle dance to show the direction of flowers."])  # fmt: skip
    try:
        state = build_graph(output="state").invoke({"task": task}, context=fake_context())
        provider.force_flush()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans: list[dict] = []
    for _ in range(120):  # Phoenix writes what it received in the background
        spans = _spans(phoenix)
        if {s["name"] for s in spans} >= {"mtrag-graph", *NODE_ORDER}:
            break
        time.sleep(0.5)
    by_name = {s["name"]: s for s in spans}
    assert {"mtrag-graph", *NODE_ORDER} <= set(by_name), sorted(by_name)
    root = by_name["mtrag-graph"]
    assert by_name["answerability_gate"]["parent_id"] == root["context"]["span_id"]
    gate_output = json.loads(by_name["answerability_gate"]["attributes"]["output.value"])
    assert gate_output["gate"] == "yes"
    llm = [s for s in spans if s["span_kind"] == "LLM"]
    assert len(llm) == sum(1 for call in state["model_calls"] if call["node"] != "rerank")
