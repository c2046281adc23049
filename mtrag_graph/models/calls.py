"""Calling chat models: recording each call (a callback handler), bounded retries, strict parsing.

LLM output is untrusted. ``ask_choice`` and ``ask_json`` constrain decoding where the backend can
(llama.cpp grammar / JSON schema, OpenAI-compatible ``response_format``, vLLM's ``structured_outputs``),
parse strictly anyway, and on a parse failure ask again with the error appended (decoding is deterministic, so an unchanged
prompt would fail the same way). After ``retries`` failed attempts they return ``None`` and the
caller records its safe default.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast
from uuid import UUID

import openai
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tracers.context import register_configure_hook
from pydantic import BaseModel, ValidationError

from mtrag_graph.models.capabilities import capabilities_of
from mtrag_graph.models.constraints import drop_refused_constraint, refuses_constraints
from mtrag_graph.models.endpoints import endpoint_slot
from mtrag_graph.models.factory import model_name
from mtrag_graph.models.faults import TransientModelError
from mtrag_graph.models.openai_compatible import TransientEndpointError
from mtrag_graph.text import words

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


# Connection, timeout, rate-limit and 5xx errors; bad requests are not among them. (The OpenAI SDK's:
# APITimeoutError is an APIConnectionError; InternalServerError is every 5xx status.)
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientModelError,
    TransientEndpointError,
    ConnectionError,
    TimeoutError,
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
)
TRANSIENT_RETRIES = 2  # attempts after the first, for transient errors only
BACKOFF_SECONDS = 0.5  # wait before the first retry; doubles for each further one
PARSE_RETRIES = 2  # re-asks after a reply that does not parse (Context.parse_retries)
CHOICE_MAX_TOKENS = 8  # a one-word choice, with room for a stray token
JSON_MAX_TOKENS = 256


MODEL_CALL_TAG = "mtrag:model_call"  # a non-chat model run (reranker, search) that counts as a model call
# LangGraph's tag for a model run whose messages stay out of ``stream_mode="messages"``
# (``langgraph.constants.TAG_NOSTREAM``): every call; what a person may see goes there from nodekit/release.py.
NOSTREAM_TAG = "nostream"


class CallLog(BaseCallbackHandler):
    """Records every model call made while it is attached: one record per attempt, errors included.

    A LangChain callback handler, so it sees each chat model run (and each run tagged
    ``MODEL_CALL_TAG``) without the caller doing any bookkeeping. ``recording(log)`` attaches it to
    every run started in the current context (the node wrapper does this for each node); passing it
    as ``log`` to ``invoke_text`` attaches it to that call only. ``records`` become the state's
    ``model_calls``.
    """

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node
        self.records: list[dict[str, Any]] = []
        self._open: dict[UUID, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _start(self, run_id: UUID, model: str, tags: list[str] | None) -> None:
        # with_retry tags every attempt after the first "retry:attempt:N"
        attempts = [int(t.rsplit(":", 1)[1]) for t in tags or () if t.startswith("retry:attempt:")]
        # started_at: wall clock, so a run's calls can be placed against its stream (bench's call table)
        record = {
            "node": self.node,
            "model": model,
            "attempt": max(attempts, default=1),
            "started_at": time.time(),
        }
        with self._lock:
            self._open[run_id] = {"record": record, "started": time.perf_counter()}

    def _finish(self, run_id: UUID, **fields: Any) -> None:
        with self._lock:
            entry = self._open.pop(run_id, None)
            if entry is None:
                return
            entry["record"].update(seconds=time.perf_counter() - entry["started"], **fields)
            self.records.append(entry["record"])

    def on_chat_model_start(
        self, serialized, messages, *, run_id, tags=None, metadata=None, **kwargs: Any
    ) -> None:
        meta = metadata or {}
        self._start(run_id, str(meta.get("model_name") or meta.get("ls_model_name") or "chat model"), tags)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        message = getattr(response.generations[0][0], "message", None) if response.generations else None
        meta = getattr(message, "response_metadata", None) or {}
        usage: dict[str, Any] = dict(getattr(message, "usage_metadata", None) or {})
        prompt_tokens = meta.get("prompt_tokens", usage.get("input_tokens"))
        if meta.get("cached"):  # served by models.reply_cache: the model processed and generated nothing
            self._finish(
                run_id,
                prompt_tokens=prompt_tokens,
                prompt_tokens_processed=0,
                prompt_tokens_unique=0,
                completion_tokens=0,
                finish_reason=meta.get("finish_reason"),
                cached=True,
            )
            return
        self._finish(
            run_id,
            prompt_tokens=prompt_tokens,
            prompt_tokens_processed=meta.get("prompt_tokens_processed", prompt_tokens),
            prompt_tokens_unique=meta.get("prompt_tokens_unique", prompt_tokens),
            completion_tokens=meta.get("completion_tokens", usage.get("output_tokens")),
            finish_reason=meta.get("finish_reason"),
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id, error=f"{type(error).__name__}: {error}")

    def on_chain_start(self, serialized, inputs, *, run_id, tags=None, metadata=None, **kwargs: Any) -> None:
        if MODEL_CALL_TAG in (tags or ()):
            self._start(run_id, str((metadata or {}).get("model_name") or kwargs.get("name")), tags)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id, error=f"{type(error).__name__}: {error}")


_RECORDING: ContextVar[CallLog | None] = ContextVar("mtrag_call_log", default=None)
register_configure_hook(_RECORDING, inheritable=True)


@contextmanager
def recording(log: CallLog) -> Iterator[CallLog]:
    """Attach ``log`` to every LangChain run started in this context (this thread, and what it copies)."""
    token = _RECORDING.set(log)
    try:
        yield log
    finally:
        _RECORDING.reset(token)


def current_node() -> str | None:
    """The node whose calls are being recorded now, if any."""
    log = _RECORDING.get()
    return log.node if log is not None else None


def timed_model_call(name: str, call: Callable[[], R]) -> R:
    """Run a non-chat model call (reranker, search) as a run, so ``CallLog`` records it like a chat call."""
    node = current_node() or "call"
    runnable: RunnableLambda[None, R] = RunnableLambda(lambda _: call(), name=f"{node}.model")
    return runnable.invoke(None, config={"tags": [MODEL_CALL_TAG], "metadata": {"model_name": name}})


def constraint_options(model: BaseChatModel, choices=None, json_schema=None) -> dict[str, Any]:
    if not choices and not json_schema:
        return {}
    constraint = capabilities_of(model).constraint
    if constraint != "call_options" and refuses_constraints(model):
        return {}
    if constraint == "structured_outputs" and choices:
        # the bare word, as llama.cpp's grammar gives it, its log-probabilities at the first token
        return {"structured_outputs": {"choice": list(choices)}}
    if constraint in ("response_format", "structured_outputs"):
        schema = json_schema or {
            "type": "object",
            "properties": {"answer": {"type": "string", "enum": list(choices)}},
            "required": ["answer"],
        }
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": False},
            }
        }
    return {"choices": list(choices)} if choices else {"json_schema": json_schema}


def invoke_text(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    log: CallLog | None = None,
    *,
    max_tokens: int | None = None,
    transient_retries: int = TRANSIENT_RETRIES,
    backoff_seconds: float = BACKOFF_SECONDS,
    on_token: Callable[[str, UUID], None] | None = None,
    **options: Any,
) -> AIMessage:
    """One model call; transient errors are retried (LangChain's ``with_retry``), each attempt a run.

    This is the only retry layer for transient errors (remote clients are built with their own retries
    off), so every attempt is recorded: calls inside a node by the node's ``CallLog`` (see
    ``recording``); ``log`` records this call into that log instead (the evaluation's judges keep
    their own).

    Every call is tagged ``nostream``: a model's raw reply never reaches ``stream_mode="messages"``,
    where only the answer text that stands goes (``nodekit/release.show``). A transient error after some
    tokens came is retried like any other.

    ``on_token(token, attempt)``: called with each token as the model writes it (the model streams even
    when nobody streams the graph); ``attempt`` is the run id of the attempt, so a caller sees when a
    transient error started the reply over.
    """
    if log is not None:
        with recording(log):
            return invoke_text(
                model, messages, max_tokens=max_tokens, transient_retries=transient_retries,
                backoff_seconds=backoff_seconds, on_token=on_token, **options,
            )  # fmt: skip
    if max_tokens:
        options["max_tokens"] = max_tokens
    node = current_node() or "call"
    config: RunnableConfig = {
        "run_name": f"{node}.model",
        "metadata": {"node": node, "model_name": model_name(model)},
        "tags": [NOSTREAM_TAG],
    }
    relay = [TokenRelay(on_token)] if on_token is not None else []
    while True:
        retrying = (
            model.bind(**options)
            .with_config(callbacks=relay)
            .with_retry(
                retry_if_exception_type=TRANSIENT_ERRORS,
                stop_after_attempt=transient_retries + 1,
                wait_exponential_jitter=backoff_seconds > 0,
                # tenacity's "multiplier" is the first wait ("initial" is deprecated); no jitter: reproducible
                exponential_jitter_params=cast(Any, {"multiplier": backoff_seconds, "jitter": 0}),
            )
        )
        try:
            with endpoint_slot(model):  # waits while the model's endpoint has its cap of requests in flight
                return cast(AIMessage, retrying.invoke(list(messages), config=config))
        except Exception as error:
            if drop_refused_constraint(model, error, options):
                continue  # the endpoint cannot constrain output: ask plainly, the caller parses strictly
            raise


class TokenRelay(BaseCallbackHandler):
    """Hands each new token of a chat model run to ``on_token(token, run_id)``.

    Having ``tap_output_iter`` and ``tap_output_aiter`` makes it a streaming handler to LangChain
    (``langchain_core.tracers._streaming._StreamingCallbackHandler`` is a runtime-checkable protocol of
    those two), so the model streams its reply even when no one streams the graph.
    """

    def __init__(self, on_token: Callable[[str, UUID], None]) -> None:
        super().__init__()
        self.on_token = on_token

    def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        if isinstance(token, str) and token:
            self.on_token(token, run_id)

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output


def parse_choice(text: str, choices: Sequence[str]) -> str | None:
    """The choice a reply names: the whole reply, ``{"answer": ...}``, or its first word; else None."""
    raw = text.strip()
    if raw.startswith("{"):
        try:
            value = json.loads(raw).get("answer")
        except (json.JSONDecodeError, AttributeError):
            return None
        raw = str(value) if value is not None else ""
    lowered = raw.strip().strip("\"'`*. ").lower()
    wanted = {c.lower(): c for c in choices}
    if lowered in wanted:
        return wanted[lowered]
    first = words(lowered)[:1]
    if first and first[0] in wanted:
        return wanted[first[0]]
    return None


def parse_json_object(text: str, schema: type[T]) -> T:
    """Validate the first JSON object in ``text`` against ``schema``; raises ValueError."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON: {error.msg}") from None
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        raise ValueError(f"JSON does not match {schema.__name__}: {error.errors()[0]['msg']}") from None


def ask_choice(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    choices: Sequence[str],
    log: CallLog | None = None,
    *,
    retries: int = PARSE_RETRIES,
) -> tuple[str | None, list[str]]:
    """One of ``choices`` or None after ``retries`` unparseable replies; also the raw replies."""
    conversation = list(messages)
    raws: list[str] = []
    for _ in range(retries + 1):
        reply = invoke_text(
            model,
            conversation,
            log,
            max_tokens=CHOICE_MAX_TOKENS,
            **constraint_options(model, choices=choices),
        )
        raws.append(str(reply.content))
        value = parse_choice(raws[-1], choices)
        if value is not None:
            return value, raws
        conversation = [
            *messages,
            AIMessage(content=raws[-1]),
            HumanMessage(content=f"Reply with exactly one word: {' or '.join(choices)}."),
        ]
    return None, raws


def ask_json(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    schema: type[T],
    log: CallLog | None = None,
    *,
    retries: int = PARSE_RETRIES,
    max_tokens: int = JSON_MAX_TOKENS,
) -> tuple[T | None, list[str]]:
    """A validated ``schema`` instance, or None after ``retries`` invalid replies; also the raw replies."""
    conversation = list(messages)
    raws: list[str] = []
    options = constraint_options(model, json_schema=schema.model_json_schema())
    for _ in range(retries + 1):
        reply = invoke_text(model, conversation, log, max_tokens=max_tokens, **options)
        raws.append(str(reply.content))
        try:
            return parse_json_object(raws[-1], schema), raws
        except ValueError as error:
            conversation = [
                *messages,
                AIMessage(content=raws[-1]),
                HumanMessage(content=f"That reply was not valid ({error}). Reply with only the JSON object."),
            ]
    return None, raws
