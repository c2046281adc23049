"""An OpenAI-compatible stand-in endpoint: deterministic replies after an injected latency.

For tests and the throughput benchmark: it answers ``POST /v1/chat/completions`` the way a vLLM
server would (a reply that follows ``response_format``'s JSON schema or ``structured_outputs``' choice
when one is asked for, plain text otherwise; server-sent events when ``stream`` is asked for), but the reply is a function of the request alone (a hash of its messages), so a run at any
concurrency gets the same answers. It listens on 127.0.0.1 only, serves at most ``max_requests``
completions and stops by itself after them or after ``idle_exit_s`` without a request.
``GET /stats`` reports the requests served and the most that were in flight at once.

    python -m mtrag_graph.testing.standin --latency 0.3 --max-requests 5000   # prints its base URL
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

YES_NO_SHARE = 4  # an enum reply picks the first choice except one time in this many


def _digest(body: dict[str, Any]) -> int:
    constraint = body.get("response_format") or body.get("structured_outputs")
    payload = json.dumps([body.get("messages"), constraint], sort_keys=True)
    return int.from_bytes(hashlib.sha256(payload.encode("utf-8")).digest()[:8], "big")


def _schema_reply(schema: dict[str, Any], digest: int) -> dict[str, Any]:
    """An object that satisfies a flat JSON schema: enums pick a choice, strings get a short sentence."""
    reply: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        if spec.get("enum"):
            choices = spec["enum"]
            reply[name] = choices[0] if digest % YES_NO_SHARE or len(choices) == 1 else choices[1]
        elif spec.get("type") in ("integer", "number"):
            reply[name] = digest % 10
        else:
            reply[name] = f"What does item {digest % 9973} of the {name.replace('_', ' ')} say?"
    return reply


_FIRST_DOCUMENT = re.compile(r"\[Document 1\][^\n]*\n(.*?)\n\[End of document 1\]", re.DOTALL)
_SENTENCE = re.compile(r"[^.!?]+[.!?]")


def completion_text(body: dict[str, Any]) -> str:
    """The stand-in's reply to a chat-completion request (a pure function of the request): JSON for a
    schema; for free text, the first two sentences of the prompt's first document when it has one (an
    answer the grounding check keeps, in two sentences, as a real model's would be), else a fixed one."""
    digest = _digest(body)
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema:
        return json.dumps(_schema_reply(schema, digest))
    choices = (body.get("structured_outputs") or {}).get("choice")  # vLLM's choice: the bare word
    if choices:
        return choices[0] if digest % YES_NO_SHARE or len(choices) == 1 else choices[1]
    prompt = str(((body.get("messages") or [{}])[-1]).get("content") or "")
    document = _FIRST_DOCUMENT.search(prompt)
    sentences = _SENTENCE.findall(document.group(1)) if document else []
    if sentences:
        return " ".join(s.strip() for s in sentences[:2])
    return f"Item {digest % 9973} is described in the documents, and it works as stated there."


class StandInServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        latency_s: float = 0.0,
        max_requests: int | None = None,
        idle_exit_s: float | None = None,
        port: int = 0,
        reject_json_schema: bool = False,
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.latency_s = latency_s
        self.max_requests = max_requests
        self.idle_exit_s = idle_exit_s
        # answer a json_schema response_format as llama-cpp-python's server does (500, "json_object" only)
        # and vLLM's structured_outputs as OpenAI's API does (400, an unrecognised argument)
        self.reject_json_schema = reject_json_schema
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.last_request = time.monotonic()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a killed run) is not an error worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def start(self) -> StandInServer:
        """Serve on a daemon thread (and stop by itself when idle, if ``idle_exit_s`` is set)."""
        threading.Thread(target=self.serve_forever, daemon=True, name="stand-in").start()
        if self.idle_exit_s:
            threading.Thread(target=self._watch_idle, daemon=True, name="stand-in-idle").start()
        return self

    def _watch_idle(self) -> None:
        assert self.idle_exit_s is not None
        while time.monotonic() - self.last_request < self.idle_exit_s:
            time.sleep(min(1.0, self.idle_exit_s / 4))
        self.shutdown()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"served": self.served, "peak_in_flight": self.peak_in_flight, "in_flight": self.in_flight}

    def _enter(self, body: dict[str, Any]) -> bool:
        with self._lock:
            self.last_request = time.monotonic()
            if self.max_requests is not None and self.served >= self.max_requests:
                return False
            self.served += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.requests.append(body)
            return True

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.last_request = time.monotonic()
            spent = self.max_requests is not None and self.served >= self.max_requests
            if spent and self.in_flight == 0:
                threading.Thread(target=self.shutdown, daemon=True).start()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses its connections
    # headers and body go out in two writes: without TCP_NODELAY the body waits for a delayed ACK (40 ms)
    disable_nagle_algorithm = True
    server: StandInServer

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/stats"):
            self._send(200, self.server.stats())
        elif self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        response_format = body.get("response_format") or {}
        if self.server.reject_json_schema and response_format.get("type") not in (
            None,
            "text",
            "json_object",
        ):
            self.server.requests.append(body)
            message = "1 validation error: ('body', 'response_format', 'type'): Input should be 'text' or 'json_object'"
            self._send(500, {"error": {"message": message, "type": "internal_server_error"}})
            return
        if self.server.reject_json_schema and "structured_outputs" in body:
            self.server.requests.append(body)
            message = "Unrecognized request argument supplied: structured_outputs"
            self._send(400, {"error": {"message": message, "type": "invalid_request_error"}})
            return
        if not self.server._enter(body):
            self._send(503, {"error": {"message": "stand-in: request budget spent"}})
            return
        try:
            content = completion_text(body)
            if body.get("stream"):
                self._stream(body, content)
                return
            if self.server.latency_s:
                time.sleep(self.server.latency_s)
            self._send(
                200,
                {
                    "id": "chatcmpl-standin", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "stand-in"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": len(content.split()),
                              "total_tokens": 10 + len(content.split())},
                },
            )  # fmt: skip
        finally:
            self.server._leave()

    def _stream(self, body: dict[str, Any], content: str) -> None:
        """The reply as server-sent events, the way vLLM streams: half the latency before the first
        token, the other half spread over the words."""
        pieces = [word + " " for word in content.split(" ")]
        pieces[-1] = pieces[-1].rstrip()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model", "stand-in")}  # fmt: skip

        def event(payload: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps({**base, **payload})}\n\n".encode())
            self.wfile.flush()

        time.sleep(self.server.latency_s / 2)
        for piece in pieces:
            event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            time.sleep(self.server.latency_s / 2 / len(pieces))
        event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        usage = {"prompt_tokens": 10, "completion_tokens": len(pieces), "total_tokens": 10 + len(pieces)}
        event({"choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def log_message(self, *args: Any) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds each completion takes")
    parser.add_argument("--max-requests", type=int, required=True, help="stop after this many completions")
    parser.add_argument("--idle-exit", type=float, default=60.0, help="stop after this many idle seconds")
    args = parser.parse_args(argv)
    server = StandInServer(args.latency, args.max_requests, args.idle_exit, port=args.port)
    print(server.base_url, flush=True)
    if args.idle_exit:
        threading.Thread(target=server._watch_idle, daemon=True).start()
    server.serve_forever()
    print(json.dumps(server.stats()), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
