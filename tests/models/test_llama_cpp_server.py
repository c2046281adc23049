"""Real servers on loopback: llama-cpp-python's OpenAI-compatible server behind the ``vllm:`` spec (the
graph on ``langgraph dev``: tests/serve/test_langgraph_server.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from langchain_core.messages import HumanMessage

from mtrag_graph.context import Context
from mtrag_graph.models.bundled import gguf_path
from mtrag_graph.models.factory import get_chat_model
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.testing import endpoint_context, make_task
from mtrag_graph.testing.standin import StandInServer
from tests.servers import free_port, stop, wait_until_up

PASSAGES = [
    "The Eiffel Tower opened to the public on 15 May 1889, during the Exposition Universelle.",
    "The Statue of Liberty was dedicated in October 1886 in New York Harbor.",
]


# ---------------------------------------------------------------- endpoints without json_schema


def test_an_endpoint_that_rejects_constraints_is_asked_plainly_and_the_run_goes_on(tmp_path):
    server = StandInServer(reject_json_schema=True).start()
    spec = f"vllm:plain@{server.base_url}"
    context = endpoint_context(spec)
    tasks = tmp_path / "tasks.jsonl"
    turns = ["When did the tower open?", "In 1889.", "Who dedicated the statue then?"]
    tasks.write_text(json.dumps(make_task(turns, PASSAGES, "plain<::>1")) + "\n")
    try:
        summary = answer_tasks(tasks, tmp_path / "out.jsonl", context, progress=False, concurrency=2)
    finally:
        server.shutdown()
        server.server_close()
    record = json.loads((tmp_path / "out.jsonl").read_text())
    assert summary.failed == 0 and record["route"]["abstain_reason"] != "error"
    rejected = [e for e in record["route"]["model_errors"] if "structured_outputs" in e["error"]]
    assert len(rejected) == 1, "only the first constrained call pays for the rejection"
    constrained = ["response_format" in r or "structured_outputs" in r for r in server.requests]
    rejected_from = constrained.index(True)  # the first constrained call (the client retries a 500 itself)
    retried_plainly = constrained.index(False, rejected_from)
    assert not any(constrained[retried_plainly:]), "after the rejection no call asks for a constraint"


# ---------------------------------------------------------------- llama-cpp-python's server


@pytest.fixture
def llama_server(tmp_path):
    """llama_cpp.server on 127.0.0.1 serving the bundled 0.5B GGUF (skipped only if it cannot start)."""
    try:
        import llama_cpp.server  # noqa: F401, PLC0415 - optional (the serve extra): is it installed?

        model = gguf_path("qwen2.5-coder-0.5b")
    except Exception as error:  # noqa: BLE001 - the reason is the skip message
        pytest.skip(f"llama_cpp.server cannot start: {type(error).__name__}: {error}")
    port, log = free_port(), tmp_path / "llama-server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "qwen-0.5b",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
        "--n_threads", os.environ.get("MTRAG_N_THREADS", "1"),
    ]  # fmt: skip
    with open(log, "w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    problem = wait_until_up(f"{base}/models", process, log)
    if problem:
        stop(process)
        pytest.skip(f"llama_cpp.server did not start: {problem}")
    yield base
    stop(process)


@pytest.mark.slow
def test_graph_runs_through_the_vllm_spec_against_llama_cpp_server(tmp_path, llama_server):
    spec = f"vllm:qwen-0.5b@{llama_server}"
    context = Context(
        rewrite_model=spec, classify_model=spec, gate_model=spec, generate_model=spec, reranker="lexical"
    )
    rows = [
        make_task(["When did the Eiffel Tower open to the public?"], PASSAGES, "real<::>1"),
        make_task(
            ["When did the Eiffel Tower open?", "On 15 May 1889.", "And when was the statue dedicated?"],
            PASSAGES,
            "real<::>2",
        ),
    ]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # llama-cpp-python's server runs one request at a time (a streamed request that comes while it is busy
    # gets an empty stream): one request in flight to it, two tasks in flight
    summary = answer_tasks(
        tasks, tmp_path / "out.jsonl", context, progress=False, concurrency=2, endpoint_concurrency=1
    )
    records = {r["task_id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
    assert summary.failed == 0 and set(records) == {"real<::>1", "real<::>2"}
    for record in records.values():
        route = record["route"]
        assert route["abstain_reason"] != "error", route.get("error")
        assert route["model_calls"] >= 2 and route["completion_tokens"] > 0  # real generations
        assert record["predictions"][0]["text"].strip()
    first = records["real<::>1"]
    if not first["route"]["abstained"]:
        assert "1889" in first["predictions"][0]["text"]
    assert records["real<::>2"]["route"]["relation_class"] in (1, 2, 3, 4)
    print({k: (r["route"]["gate"], r["predictions"][0]["text"]) for k, r in records.items()})


@pytest.mark.slow
def test_the_vllm_spec_streams_tokens_from_llama_cpp_server_that_join_to_the_whole_reply(llama_server):
    model = get_chat_model(f"vllm:qwen-0.5b@{llama_server}")
    messages = [HumanMessage(content="In two sentences: when did the Eiffel Tower open, and where is it?")]
    # the second call finds the prompt in the server's KV cache, as the streamed call does: llama.cpp's
    # greedy choice can differ between a freshly evaluated prompt and a cached one, not between streaming
    # and not streaming
    model.invoke(messages, max_tokens=48)
    whole = model.invoke(messages, max_tokens=48)
    arrivals, merged = [], None
    for chunk in model.stream(messages, max_tokens=48):
        merged = chunk if merged is None else merged + chunk
        if chunk.content:
            arrivals.append((time.perf_counter(), chunk.content))
    assert len(arrivals) > 5, arrivals
    assert "".join(text for _, text in arrivals) == whole.content
    assert merged is not None
    assert merged.response_metadata.get("finish_reason") == whole.response_metadata.get("finish_reason")
    # streamed, not sent whole: the first tokens of a long reply (about 200 tokens, seconds of generation
    # on one thread) arrive well before its last; a short reply could come in one burst on a loaded machine
    counting = [HumanMessage(content="Write a story of about 150 words about a robot who learns to paint.")]
    times = [time.perf_counter() for c in model.stream(counting, max_tokens=200) if c.content]
    spread = times[-1] - times[0]
    assert len(times) > 50 and spread > 0.1
    print(f"{len(times)} chunks of the long reply; the first came {spread:.2f} s before the last")
