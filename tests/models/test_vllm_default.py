"""The whole default pipeline on real vLLM engines: the ``vllm`` preset, its two servers (the bundled
0.5B on 8011 and the 1.5B on 8012, ``scripts/vllm_start_default.sh``) and the same tasks through the
Python API and the ``answer`` command.

Skips without the set-up (``scripts/vllm_setup.sh``: ``.venv-vllm`` and both converted models);
``MTRAG_REQUIRE_VLLM=1`` (CI) makes that a failure. Servers already answering on those ports with the
right models are used as they are; otherwise the module starts them and stops them at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from mtrag_graph.context import Context
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.stages import model_settings
from tests.conftest import REPO
from tests.models.test_llama_cpp_server import PASSAGES
from tests.models.test_vllm_engine import (
    graph_task_rows,
    records_of,
    setup_missing,
    skip_or_fail,
    write_tasks,
)

pytestmark = pytest.mark.slow

SERVERS = {"qwen2.5-coder-0.5b": 8011, "qwen2.5-coder-1.5b": 8012}


def serving(model: str, port: int) -> bool | None:
    """True when the port serves ``model``, False when nothing answers, None when something else does."""
    try:
        listed = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return False
    return True if any(m.get("id") == model for m in listed.get("data", [])) else None


@pytest.fixture(scope="module")
def engines():
    skip_or_fail(setup_missing(tuple(SERVERS)))
    started = []
    for model, port in SERVERS.items():
        state = serving(model, port)
        assert state is not None, f"port {port} answers but does not serve {model}"
        if not state:
            env = {**os.environ, "MTRAG_VLLM_MODEL": model, "MTRAG_VLLM_PORT": str(port)}
            done = subprocess.run(
                ["bash", "scripts/vllm_start.sh"], cwd=REPO, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, f"scripts/vllm_start.sh ({model}): {done.stdout}{done.stderr}"
            started.append(port)
    # a first request after a start took 113 and 160 s on two cores (a reply is waited for 120 s):
    # one short request each, waited for as long as it takes, before the tests' calls
    for model, port in SERVERS.items():
        body = {"model": model, "messages": [{"role": "user", "content": "Say yes."}], "max_tokens": 2}
        reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=900)
        assert reply.status_code == 200, reply.text
    yield
    for port in started:
        env = {**os.environ, "MTRAG_VLLM_PORT": str(port)}
        subprocess.run(["bash", "scripts/vllm_stop.sh"], cwd=REPO, env=env, capture_output=True)


def test_the_vllm_preset_is_the_default_with_every_model_on_a_server():
    default, on_vllm = Context(), Context.from_preset("vllm")
    roles = set(model_settings(Context))
    assert {f: getattr(on_vllm, f) for f in roles} == {
        f: f"vllm:{getattr(default, f)}@http://127.0.0.1:{SERVERS[getattr(default, f)]}/v1" for f in roles
    }
    others = {name: value for name, value in vars(on_vllm).items() if name not in roles}
    assert others == {name: value for name, value in vars(default).items() if name not in roles}


def test_the_default_pipeline_answers_on_both_engines(engines, tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", graph_task_rows())
    summary = answer_tasks(
        tasks, tmp_path / "out.jsonl", Context.from_preset("vllm"), progress=False, concurrency=2
    )
    records = {r["task_id"]: r for r in records_of(tmp_path / "out.jsonl")}
    assert summary.failed == 0 and len(records) == 4
    for record in records.values():
        # every task ends in an answer or a decision, none in an error. A call may time out and be retried
        # (on two cores the 1.5B's engine took over 120 s for a reply with four tasks in flight, twice: the
        # graph's bounded retry is what answers then), so model_errors are printed, not refused.
        route = record["route"]
        assert route["abstain_reason"] != "error", route.get("error")
        print(record["task_id"], route["model_errors"])
    # both servers were called (the client's endpoint counts: cap, peak in flight, requests)
    assert {url for url, (_, _, requests) in summary.endpoints.items() if requests} == {
        f"http://127.0.0.1:{port}/v1" for port in SERVERS.values()
    }
    first = records["vllm<::>1"]
    assert "1889" in first["predictions"][0]["text"], first["predictions"][0]["text"]
    assert records["vllm<::>4"]["route"]["abstained"], records["vllm<::>4"]["predictions"][0]["text"]


def test_one_command_runs_the_default_on_vllm(engines, tmp_path):
    task = {"task_id": "cli<::>1", "contexts": [{"document_id": "d0", "text": PASSAGES[0]}],
            "input": [{"speaker": "user", "text": "When did the Eiffel Tower open to the public?"}]}  # fmt: skip
    tasks, out = write_tasks(tmp_path / "tasks.jsonl", [task]), tmp_path / "out.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "mtrag_graph", "answer", str(tasks), "-o", str(out), "--preset", "vllm", "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["status"] == "ok" and "1889" in record["predictions"][0]["text"], record["predictions"]
