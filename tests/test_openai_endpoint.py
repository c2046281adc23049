"""The OpenAI-compatible path (OpenAI, or a vLLM server): a local stand-in server answers over HTTP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_openai import ChatOpenAI

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.models.factory import get_chat_model
from tests.conftest import make_task


class StandIn(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions like vLLM would: a JSON reply when a schema is asked for."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        StandIn.requests.append(body)
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        prompt = body["messages"][-1]["content"]
        if "answer" in schema.get("properties", {}):
            content = json.dumps({"answer": "yes"})
        elif "Rewrite the last user question" in prompt:
            content = "What do honey bees do when food is close?"
        else:
            content = "Honey bees perform a round dance when food is close to the hive."
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

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    StandIn.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_vllm_spec_builds_an_openai_client_on_the_base_url(endpoint):
    model = get_chat_model(f"vllm:Qwen/Qwen2.5-7B-Instruct@{endpoint}")
    assert isinstance(model, ChatOpenAI)
    assert str(model.openai_api_base) == endpoint


def test_graph_runs_end_to_end_against_an_openai_compatible_server(endpoint):
    spec = f"vllm:stand-in@{endpoint}"
    context = Context(
        rewrite_model=spec, classify_model=spec, gate_model=spec, generate_model=spec, reranker="lexical"
    )
    task = make_task(
        ["How do bees find flowers?", "They dance.", "What do they do when food is close?"],
        ["The round dance means food is close to the hive."],
    )
    state = build_graph().invoke({"task": task}, context=context)
    assert state["answer"] == "Honey bees perform a round dance when food is close to the hive."
    assert state["gate"] == "yes"
    choice_requests = [r for r in StandIn.requests if r.get("response_format")]
    assert choice_requests, "yes/no calls must ask the server for constrained output"
    assert choice_requests[0]["response_format"]["type"] == "json_schema"
    assert all(r["model"] == "stand-in" and r["temperature"] == 0.0 for r in StandIn.requests)
