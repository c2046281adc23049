"""Calling chat models: recording each call (a callback handler), bounded retries, strict parsing.

LLM output is untrusted. ``ask_choice`` and ``ask_json`` constrain decoding where the backend can
(llama.cpp grammar / JSON schema, OpenAI-compatible ``response_format``), parse strictly anyway, and
on a parse failure ask again with the error appended (decoding is deterministic, so an unchanged
prompt would fail the same way). After ``retries`` failed attempts they return ``None`` and the
caller records its safe default.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tracers.context import register_configure_hook
from pydantic import BaseModel, ValidationError

from mtrag_graph.concurrency import endpoint_slot, is_openai_compatible
from mtrag_graph.models.constraints import drop_refused_constraint, refuses_constraints
from mtrag_graph.models.factory import model_name

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

TRANSIENT_ERROR_NAMES = {
    "APIConnectionError",
    "APITimeoutError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "TimeoutError",
    "ReadTimeout",
    "ConnectTimeout",
    "TransientModelError",
}


class TransientModelError(RuntimeError):
    """A model failure worth retrying (raised by fault-injection wrappers and adapters)."""


def is_transient(error: BaseException) -> bool:
    """Connection, timeout, rate-limit and 5xx errors are transient; bad requests are not."""
    for cls in type(error).__mro__:
        if cls.__name__ in TRANSIENT_ERROR_NAMES:
            return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


MODEL_CALL_TAG = "mtrag:model_call"  # a non-chat model run (reranker, search) that counts as a model call


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

    def _start(self, run_id: UUID, model: str, metadata: dict[str, Any] | None) -> None:
        record = {"node": self.node, "model": model, "attempt": (metadata or {}).get("attempt", 1)}
        with self._lock:
            self._open[run_id] = {"record": record, "started": time.perf_counter()}

    def _finish(self, run_id: UUID, **fields: Any) -> None:
        with self._lock:
            entry = self._open.pop(run_id, None)
            if entry is None:
                return
            entry["record"].update(seconds=time.perf_counter() - entry["started"], **fields)
            self.records.append(entry["record"])

    def on_chat_model_start(self, serialized, messages, *, run_id, metadata=None, **kwargs: Any) -> None:
        meta = metadata or {}
        self._start(run_id, str(meta.get("model_name") or meta.get("ls_model_name") or "chat model"), meta)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        message = getattr(response.generations[0][0], "message", None) if response.generations else None
        meta = getattr(message, "response_metadata", None) or {}
        usage: dict[str, Any] = dict(getattr(message, "usage_metadata", None) or {})
        prompt_tokens = meta.get("prompt_tokens", usage.get("input_tokens"))
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
            self._start(run_id, str((metadata or {}).get("model_name") or kwargs.get("name")), metadata)

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
    if is_openai_compatible(model):
        if refuses_constraints(model):
            return {}
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
    transient_retries: int = 2,
    backoff_seconds: float = 0.5,
    **options: Any,
) -> AIMessage:
    """One model call, retried with backoff on transient errors; each attempt is recorded.

    Calls inside a node are recorded by the node's ``CallLog`` (see ``recording``); ``log`` records
    this call into another one (the evaluation's judges keep their own).
    """
    if max_tokens:
        options["max_tokens"] = max_tokens
    node = (log.node if log is not None else None) or current_node() or "call"
    attempt = 0
    while True:
        attempt += 1
        metadata = {"node": node, "model_name": model_name(model), "attempt": attempt}
        config: RunnableConfig = {"run_name": f"{node}.model", "metadata": metadata}
        if log is not None:
            config["callbacks"] = [log]
        try:
            with endpoint_slot(model):  # waits while the model's endpoint has its cap of requests in flight
                return model.invoke(list(messages), config=config, **options)
        except Exception as error:  # noqa: BLE001 - classified below, re-raised when permanent
            if drop_refused_constraint(model, error, options):
                continue  # the endpoint cannot constrain output: ask plainly, the caller parses strictly
            if attempt > transient_retries or not is_transient(error):
                raise
            time.sleep(backoff_seconds * 2 ** (attempt - 1))


_WORD = re.compile(r"[a-z0-9]+")


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
    words = _WORD.findall(lowered)
    if words and words[0] in wanted:
        return wanted[words[0]]
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
    retries: int = 2,
) -> tuple[str | None, list[str]]:
    """One of ``choices`` or None after ``retries`` unparseable replies; also the raw replies."""
    conversation = list(messages)
    raws: list[str] = []
    for _ in range(retries + 1):
        reply = invoke_text(
            model, conversation, log, max_tokens=8, **constraint_options(model, choices=choices)
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
    retries: int = 2,
    max_tokens: int = 256,
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
