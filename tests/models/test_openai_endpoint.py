"""The OpenAI-compatible path (OpenAI, or a vLLM server): a local stand-in server answers over HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from mtrag_graph.graph import build_graph
from mtrag_graph.models.calls import CallLog, constraint_options, invoke_text
from mtrag_graph.models.factory import get_chat_model
from mtrag_graph.testing import endpoint_context, make_task
from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StandIn(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions like vLLM would: a JSON reply when a schema is asked for."""

    requests: list[dict] = []
    unavailable = 0  # answer this many requests with 503 first

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        StandIn.requests.append(body)
        if StandIn.unavailable > 0:
            StandIn.unavailable -= 1
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        prompt = body["messages"][-1]["content"]
        if "answer" in schema.get("properties", {}):
            content = json.dumps({"answer": "yes"})
        elif (body.get("structured_outputs") or {}).get("choice"):
            content = body["structured_outputs"]["choice"][0]
        elif "Rewrite the last user question" in prompt:
            content = "What do honey bees do when food is close?"
        else:
            content = "Honey bees perform a round dance when food is close to the hive."
        if body.get("stream"):
            self._send_events(body, content)
            return
        reply = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_events(self, body, content):
        """The reply as server-sent events: one per word, then the finish reason, the usage, [DONE]."""
        words = [w + " " for w in content.split(" ")]
        words[-1] = words[-1].rstrip()
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
        events += [{**base, "choices": [{"index": 0, "delta": {"content": w}}]} for w in words]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": 10, "completion_tokens": len(words), "total_tokens": 10 + len(words)}
            events.append({**base, "choices": [], "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    StandIn.requests = []
    StandIn.unavailable = 0
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_vllm_spec_builds_an_openai_client_on_the_base_url(endpoint):
    model = get_chat_model(f"vllm:Qwen/Qwen2.5-7B-Instruct@{endpoint}")
    assert isinstance(model, ChatOpenAI)
    assert str(model.openai_api_base) == endpoint


@pytest.mark.parametrize("streamed", [False, True])
def test_the_token_limit_goes_under_both_names(endpoint, streamed):
    """vLLM reads max_completion_tokens, llama_cpp.server only max_tokens (without it, no limit)."""
    model = get_chat_model(f"vllm:bees@{endpoint}")
    messages = [HumanMessage(content="How do bees talk?")]
    if streamed:
        assert "".join(str(c.content) for c in model.stream(messages, max_tokens=7))
    else:
        assert model.invoke(messages, max_tokens=7).content
    sent = StandIn.requests[-1]
    assert sent["max_tokens"] == sent["max_completion_tokens"] == 7 and bool(sent.get("stream")) is streamed
    model.invoke(messages)
    assert "max_tokens" not in StandIn.requests[-1] and "max_completion_tokens" not in StandIn.requests[-1]


def test_graph_runs_end_to_end_against_an_openai_compatible_server(endpoint):
    spec = f"vllm:stand-in@{endpoint}"
    context = endpoint_context(spec)
    task = make_task(
        ["How do bees find flowers?", "They dance.", "What do they do when food is close?"],
        ["The round dance means food is close to the hive."],
    )
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert state["answer"] == "Honey bees perform a round dance when food is close to the hive."
    assert state["gate"] == "yes"
    # vLLM's own choice constraint (the bare word, as llama.cpp gives it); JSON through response_format
    choice_requests = [r for r in StandIn.requests if r.get("structured_outputs")]
    assert choice_requests, "yes/no calls must ask the server for constrained output"
    assert choice_requests[0]["structured_outputs"] == {"choice": ["yes", "no"]}
    assert all(r["model"] == "stand-in" and r["temperature"] == 0.0 for r in StandIn.requests)


def test_a_vllm_spec_asks_a_choice_as_vllms_choice_and_a_schema_as_response_format(endpoint, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    vllm, openai = get_chat_model(f"vllm:c@{endpoint}"), get_chat_model(f"openai:c@{endpoint}")
    assert constraint_options(vllm, choices=["yes", "no"]) == {
        "structured_outputs": {"choice": ["yes", "no"]}
    }
    assert constraint_options(vllm, json_schema=schema)["response_format"]["json_schema"]["schema"] == schema
    openai_choice = constraint_options(openai, choices=["yes", "no"])["response_format"]["json_schema"]
    assert openai_choice["schema"]["properties"]["answer"]["enum"] == ["yes", "no"]


def test_one_retry_layer_counts_and_records_every_request(endpoint):
    model = get_chat_model(f"vllm:retry-count@{endpoint}")
    StandIn.unavailable = 2
    log = CallLog(node="t")
    reply = invoke_text(model, [HumanMessage(content="Say something.")], log, backoff_seconds=0)
    assert reply.content and len(StandIn.requests) == 3  # the client itself retries nothing
    assert [(r["attempt"], "503" in r.get("error", "")) for r in log.records] == [
        (1, True),
        (2, True),
        (3, False),
    ]


def test_after_the_bounded_retries_the_error_is_raised(endpoint):
    model = get_chat_model(f"vllm:retry-limit@{endpoint}")
    StandIn.unavailable = 10
    with pytest.raises(Exception, match="503"):
        invoke_text(model, [HumanMessage(content="Say something.")], backoff_seconds=0)
    assert len(StandIn.requests) == 3


def test_the_endpoint_streams_the_draft_and_the_graph_streams_the_answer_that_stands(endpoint):
    spec = f"vllm:stand-in@{endpoint}"
    context = endpoint_context(spec, gate_classifier=None)
    task = make_task(
        ["How do bees find flowers?", "They dance.", "What do they do when food is close?"],
        ["The round dance means food is close to the hive."],
    )
    shown, state = [], {}
    for mode, chunk in build_graph(output="state").stream(
        {"task": task}, context=context, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            assert chunk[1]["langgraph_node"] in ("generate", "finish")  # no model's own tokens
            shown.append(chunk[0].content)
        else:
            state = chunk
    assert "".join(shown) == state["answer"]
    # free-text calls may stream (their tokens stay out of the graph's stream); constrained ones never do
    streamed = [r for r in StandIn.requests if r.get("stream")]
    assert streamed and not any("response_format" in r or "structured_outputs" in r for r in streamed)
    assert any(r.get("structured_outputs") for r in StandIn.requests)
    generate_calls = [c for c in state["model_calls"] if c["node"] == "generate"]
    assert generate_calls[0]["completion_tokens"] == len(state["answer"].split())
    assert generate_calls[0]["finish_reason"] == "stop"


@pytest.mark.parametrize("kind", ["vllm", "openai"])
def test_free_text_streams_and_a_constrained_reply_comes_whole(endpoint, kind, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    model = get_chat_model(f"{kind}:stream-{kind}@{endpoint}")
    pieces = [c.content for c in model.stream([HumanMessage(content="Say something.")]) if c.content]
    assert (
        len(pieces) > 5
        and "".join(pieces) == "Honey bees perform a round dance when food is close to the hive."
    )
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}}}
    constrained = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    chunks = list(model.stream([HumanMessage(content="Yes or no?")], response_format=constrained))
    assert [c.content for c in chunks if c.content] == ['{"answer": "yes"}']
    assert [bool(r.get("stream")) for r in StandIn.requests] == [True, False]


def standin_process(port: int) -> tuple[subprocess.Popen, str]:
    """The stand-in in a process of its own (a killed process drops its connections, as a server does)."""
    command = [sys.executable, "-m", "mtrag_graph.testing.standin", "--port", str(port), "--latency", "0",
               "--max-requests", "100", "--idle-exit", "60"]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def test_a_call_waits_for_an_endpoint_that_answered_before_to_come_back(monkeypatch):
    monkeypatch.setenv("MTRAG_ENDPOINT_OUTAGE_S", "60")
    port = free_port()
    first, url = standin_process(port)
    model = get_chat_model(f"vllm:outage@{url}")
    assert invoke_text(model, [HumanMessage(content="Say something.")], backoff_seconds=0).content
    first.kill()
    first.wait()
    second: list[subprocess.Popen] = []
    restart = threading.Timer(2.0, lambda: second.append(standin_process(port)[0]))
    restart.start()
    log = CallLog(node="t")
    try:
        reply = invoke_text(model, [HumanMessage(content="Say something else.")], log, backoff_seconds=0)
    finally:
        restart.join()
        for process in second:
            process.kill()
            process.wait()
    assert reply.content and second
    assert "ConnectionError" in log.records[0]["error"] and "error" not in log.records[1]


def test_an_endpoint_that_never_answered_fails_at_once(monkeypatch):
    monkeypatch.setenv("MTRAG_ENDPOINT_OUTAGE_S", "30")
    model = get_chat_model(f"vllm:never@http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    with pytest.raises(ConnectionError):
        invoke_text(model, [HumanMessage(content="Say something.")], backoff_seconds=0)
    assert time.monotonic() - started < 5
