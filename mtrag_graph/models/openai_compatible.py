"""``ChatOpenAI`` for self-hosted OpenAI-compatible servers (vLLM), posting with a plain HTTP client.

The request payload and the parsing of the reply are ``ChatOpenAI``'s own; only the transport
differs. The OpenAI SDK turns every request's parameters into their wire form by walking its type
annotations: measured here at about 2.5 ms of CPU per request, against 0.5 ms for the same POST with
``httpx``. One conversation makes five to seven requests, so with dozens of tasks in flight the SDK
was most of the client's CPU and capped the throughput a fast server could give (see
benchmarks/results/throughput.md). Errors keep the classes and fields the retry logic reads: a
timeout is a ``TimeoutError``, a connection failure a ``ConnectionError``, an HTTP error an
``EndpointError`` with ``status_code`` (429 and 5xx are retried, other codes are not).

A server that answered before and then stops answering (killed, restarted: vLLM takes about a minute
to come back) is waited for before the connection error is raised, at most
``MTRAG_ENDPOINT_OUTAGE_S`` seconds (``settings.endpoint_outage_seconds``), so the retry that follows
reaches the restarted server and no task of a run ends in an error for the outage. An endpoint that
never answered (a wrong URL) fails at once.

Free-text replies stream (server-sent events) when the caller streams (``graph.stream(...,
stream_mode="messages")``); constrained replies and replies with log-probabilities come whole, as when
not streamed, so the constraint fallback and the strict parsing see the same reply either way.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

from mtrag_graph import settings
from mtrag_graph.models.capabilities import Capabilities, vllm_endpoint
from mtrag_graph.models.chunks import whole_reply
from mtrag_graph.models.constraints import CONSTRAINT_KEYS, rejects_constraint

_CLIENTS: dict[str, httpx.Client] = {}
_LOCK = threading.Lock()
_ANSWERED: set[str] = set()  # endpoints that answered a request in this process
logger = logging.getLogger("mtrag_graph")


class EndpointError(RuntimeError):
    """An HTTP error status from the endpoint (``status_code``), with the body it sent."""

    def __init__(self, status_code: int, body: str):
        super().__init__(f"Error code: {status_code} - {body[:2000]}")
        self.status_code = status_code


class TransientEndpointError(EndpointError):
    """429 or 5xx: worth retrying (``models.calls.TRANSIENT_ERRORS``)."""


class ConstraintRejected(EndpointError):
    """The endpoint refused the request's constraint: not retried as is, asked again without it
    (``models.constraints.drop_refused_constraint``)."""


def endpoint_error(status_code: int, body: str, payload: dict[str, Any]) -> EndpointError:
    """The error class for an HTTP error status: a refused constraint, transient, or permanent."""
    if any(key in payload for key in CONSTRAINT_KEYS) and rejects_constraint(status_code, body):
        return ConstraintRejected(status_code, body)
    if status_code == 429 or status_code >= 500:
        return TransientEndpointError(status_code, body)
    return EndpointError(status_code, body)


def _client(base_url: str) -> httpx.Client:
    """One pooled, thread-safe client per endpoint (no cap here: ``endpoint_slot`` caps requests)."""
    with _LOCK:
        if base_url not in _CLIENTS:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
            _CLIENTS[base_url] = httpx.Client(limits=limits)
        return _CLIENTS[base_url]


def wait_out_outage(base: str, headers: dict[str, str]) -> None:
    """After a connection failure: if ``base`` answered before, wait until it answers again (its model
    list), at most ``settings.endpoint_outage_seconds()``; return at once for an endpoint never reached."""
    if base not in _ANSWERED:
        return
    limit = settings.endpoint_outage_seconds()
    deadline, warned = time.monotonic() + limit, False
    while time.monotonic() < deadline:
        try:
            if _client(base).get(f"{base}/models", headers=headers, timeout=2.0).status_code < 500:
                return
        except httpx.TransportError:
            pass
        if not warned:
            logger.warning("%s stopped answering: waiting up to %g s for it to come back", base, limit)
            warned = True
        time.sleep(1.0)


def streams_text_only(kwargs: dict[str, Any]) -> bool:
    """Whether a call with these options streams: free text does; a constrained reply
    (``response_format``, ``structured_outputs``) or one with log-probabilities comes whole."""
    return not (any(kwargs.get(key) for key in CONSTRAINT_KEYS) or kwargs.get("logprobs"))


class ChatOpenAIStreamingText(ChatOpenAI):
    """``ChatOpenAI`` (``openai:`` specs) that streams free-text replies only (see the module doc)."""

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        if streams_text_only(kwargs):
            yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)
            return
        yield whole_reply(self._generate(messages, stop=stop, **kwargs), run_manager)


class ChatOpenAICompatible(ChatOpenAI):
    """``ChatOpenAI`` whose chat completions go over ``httpx`` (see the module doc); a ``vllm:`` spec's
    model, so it constrains with vLLM's parameters (``capabilities.VLLM``)."""

    @property
    def capabilities(self) -> Capabilities:
        return vllm_endpoint(self.openai_api_base)

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        """``ChatOpenAI``'s payload, its token limit also under the older name: ``ChatOpenAI`` sends
        ``max_completion_tokens`` only, which vLLM reads and ``llama_cpp.server`` ignores (it reads
        ``max_tokens``, and without it generates to the end of its context or the reply: asked for a story
        with a limit of 200 tokens, it streamed 4,049 chunks over 131 s)."""
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if payload.get("max_completion_tokens") is not None:
            payload.setdefault("max_tokens", payload["max_completion_tokens"])
        return payload

    def _endpoint(self) -> tuple[str, dict[str, str], float]:
        base = str(self.openai_api_base or "https://api.openai.com/v1").rstrip("/")
        headers = {**(self.default_headers or {})}
        key: Any = self.openai_api_key
        key = key.get_secret_value() if hasattr(key, "get_secret_value") else key() if callable(key) else key
        if key:
            headers["Authorization"] = f"Bearer {key}"
        timeout = self.request_timeout if isinstance(self.request_timeout, int | float) else 120.0
        return base, headers, float(timeout)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        payload.pop("stream", None)
        base, headers, timeout = self._endpoint()
        try:
            response = _client(base).post(
                f"{base}/chat/completions", json=payload, headers=headers, timeout=timeout
            )
        except httpx.TimeoutException as error:
            raise TimeoutError(f"{base}: no reply within {timeout:g} s ({type(error).__name__})") from error
        except httpx.TransportError as error:
            wait_out_outage(base, headers)  # the retry that follows reaches a restarted server
            raise ConnectionError(f"{base}: {type(error).__name__}: {error}") from error
        _ANSWERED.add(base)
        if response.status_code >= 400:
            raise endpoint_error(response.status_code, response.text, payload)
        return self._create_chat_result(response.json())

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply as server-sent events, parsed by ``ChatOpenAI``'s own chunk conversion."""
        if not streams_text_only(kwargs):
            yield whole_reply(self._generate(messages, stop=stop, **kwargs), run_manager)
            return
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}  # the last event carries the token counts
        base, headers, timeout = self._endpoint()
        chunk_class: Any = AIMessageChunk
        pieces, usage, finished = 0, False, False
        try:
            with _client(base).stream(
                "POST", f"{base}/chat/completions", json=payload, headers=headers, timeout=timeout
            ) as response:
                _ANSWERED.add(base)
                if response.status_code >= 400:
                    raise endpoint_error(
                        response.status_code, response.read().decode(errors="replace"), payload
                    )
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue  # blank separators, comments, event names
                    data = line[len("data:") :].strip()
                    if data == "[DONE]":
                        break
                    event = json.loads(data)
                    if event.get("error"):
                        raise TransientEndpointError(500, json.dumps(event["error"]))
                    piece = self._convert_chunk_to_generation_chunk(event, chunk_class, {})
                    if piece is None:
                        continue
                    chunk_class = piece.message.__class__
                    pieces += bool(piece.text)
                    usage = usage or bool(event.get("usage"))
                    finished = finished or any(c.get("finish_reason") for c in event.get("choices") or ())
                    if run_manager:
                        run_manager.on_llm_new_token(piece.text, chunk=piece)
                    yield piece
        except httpx.TimeoutException as error:
            raise TimeoutError(f"{base}: no reply within {timeout:g} s ({type(error).__name__})") from error
        except httpx.TransportError as error:
            wait_out_outage(base, headers)
            raise ConnectionError(f"{base}: {type(error).__name__}: {error}") from error
        if not pieces and not finished:
            # llama.cpp's server answers a streamed request that comes while it is busy with an empty
            # stream: ask again, like any transient error
            raise TransientEndpointError(503, f"{base}: the stream ended without a reply")
        if not usage:  # llama.cpp's server ignores include_usage: one event is one token there and in vLLM
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", response_metadata={"completion_tokens": pieces})
            )
