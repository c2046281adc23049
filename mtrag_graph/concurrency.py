"""Running many tasks at once: a bounded pool of tasks in flight, and a cap on requests per endpoint.

``run_bounded`` applies a function to items with at most N in flight (worker threads; N = 1 runs
inline, with no thread at all) and yields each result as it finishes, so the caller alone writes the
output file: lines never interleave, and a process killed at any moment loses only the tasks in flight,
which a resumed run redoes.

LangGraph nodes here are sync functions: a thread per task in flight is what ``ainvoke`` would do too
(it runs sync nodes in an executor), without an event loop in between. What the threads share is
thread-safe: the model factory, embedder and index registries take a lock; a llama.cpp model holds one
lock per model file, so local models keep one call at a time whatever the concurrency; the judge's
SQLite cache and the embedding cache lock each access.

``endpoint_slot`` caps the requests in flight to one remote endpoint (an OpenAI-compatible base URL)
across every task and node of the process; ``endpoint_limit`` sets that cap for a run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models.chat_models import BaseChatModel

T = TypeVar("T")
R = TypeVar("R")

REMOTE_MODEL_TYPES = ("ChatOpenAI", "AzureChatOpenAI")


def run_bounded(work: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[tuple[T, R]]:
    """``(item, work(item))`` for every item, at most ``concurrency`` running at once, in finishing order.

    Items are taken from ``items`` only as slots free up, so a long input is never all queued in
    memory. An exception raised by ``work`` propagates to the caller when its result is yielded (the
    others in flight finish first; nothing new starts). Closing the generator early cancels the items
    not yet started.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    if concurrency == 1:
        for item in items:
            yield item, work(item)
        return
    pending = iter(items)
    in_flight: dict[Future[R], T] = {}
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="task")
    try:
        for item in pending:
            in_flight[pool.submit(work, item)] = item
            if len(in_flight) >= concurrency:
                break
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                item = in_flight.pop(future)
                if future.exception() is None:  # the next item starts before the caller handles this one
                    for following in pending:
                        in_flight[pool.submit(work, following)] = following
                        break
                yield item, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------- requests in flight per endpoint


def is_openai_compatible(model: Any) -> bool:
    """Whether ``model`` is ``ChatOpenAI`` (or a subclass): it calls an OpenAI-compatible endpoint."""
    return any(cls.__name__ in REMOTE_MODEL_TYPES for cls in type(model).__mro__)


def endpoint_of(model: Any) -> str | None:
    """The base URL a chat model sends its requests to, or None for an in-process model."""
    inner = getattr(model, "inner", None)  # a wrapper (fault injection) calls its inner model
    if isinstance(inner, BaseChatModel):
        return endpoint_of(inner)
    if not is_openai_compatible(model):
        return None
    return str(getattr(model, "openai_api_base", None) or "https://api.openai.com/v1")


@dataclass
class _EndpointState:
    limit: int
    semaphore: threading.BoundedSemaphore
    in_flight: int = 0
    peak: int = 0
    requests: int = 0


@dataclass
class EndpointLimits:
    """Process-wide: the cap on requests in flight per endpoint (None: no cap) and what was seen."""

    limit: int | None = None
    _endpoints: dict[str, _EndpointState] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _state(self, endpoint: str) -> _EndpointState | None:
        with self._lock:
            if self.limit is None:
                return None
            state = self._endpoints.get(endpoint)
            if state is None or state.limit != self.limit:
                state = _EndpointState(limit=self.limit, semaphore=threading.BoundedSemaphore(self.limit))
                self._endpoints[endpoint] = state
            return state

    @contextmanager
    def slot(self, model: Any) -> Iterator[None]:
        """Hold one of the endpoint's slots for the duration of a request (no-op for local models)."""
        endpoint = endpoint_of(model)
        state = self._state(endpoint) if endpoint else None
        if state is None:
            yield
            return
        with state.semaphore:
            with self._lock:
                state.in_flight += 1
                state.requests += 1
                state.peak = max(state.peak, state.in_flight)
            try:
                yield
            finally:
                with self._lock:
                    state.in_flight -= 1

    def peaks(self) -> dict[str, tuple[int, int, int]]:
        """``{endpoint: (limit, peak requests in flight, requests)}`` since the cap was last set."""
        with self._lock:
            return {url: (s.limit, s.peak, s.requests) for url, s in self._endpoints.items()}

    def reset_counts(self) -> None:
        with self._lock:
            for state in self._endpoints.values():
                state.peak = state.requests = 0


ENDPOINTS = EndpointLimits()


def endpoint_slot(model: Any):
    """Context manager around one request of ``model``: waits while its endpoint is at its cap."""
    return ENDPOINTS.slot(model)


@contextmanager
def endpoint_limit(limit: int | None) -> Iterator[EndpointLimits]:
    """Cap the requests in flight per endpoint at ``limit`` for the duration of a run (None: no cap)."""
    if limit is not None and limit < 1:
        raise ValueError(f"the per-endpoint limit must be at least 1, not {limit}")
    previous = ENDPOINTS.limit
    ENDPOINTS.limit = limit
    ENDPOINTS.reset_counts()
    try:
        yield ENDPOINTS
    finally:
        ENDPOINTS.limit = previous


# ---------------------------------------------------------------- what a concurrent run should say


def is_local_llama(spec: Any) -> bool:
    """Whether a model spec (or instance) runs in-process on llama.cpp (one call at a time per model)."""
    from mtrag_graph.models.bundled import BUNDLED_GGUF
    from mtrag_graph.models.factory import ALIASES

    if isinstance(spec, str):
        return ALIASES.get(spec, spec) in BUNDLED_GGUF or spec.startswith("gguf:") or spec.endswith(".gguf")
    inner = getattr(spec, "inner", None)
    if isinstance(inner, BaseChatModel):
        return is_local_llama(inner)
    return type(spec).__name__ == "ChatLlamaCpp"


def local_models_note(specs: Iterable[Any], concurrency: int) -> str | None:
    """The summary line saying that local llama.cpp models serialise their calls, when any are used."""
    from mtrag_graph.models.factory import model_name

    local = sorted({model_name(s) for s in specs if is_local_llama(s)})
    if concurrency <= 1 or not local:
        return None
    return (
        f"local llama.cpp models run one call at a time per model ({', '.join(local)}): their calls queue "
        f"behind each other at concurrency {concurrency}, and tasks interleaving on one model lose the "
        "prompt-prefix reuse between a task's gate and generate calls"
    )


def models_of(context: Any) -> list[Any]:
    """The model specs a graph run with ``context`` calls (clarify's when on; candidates and judge when
    ensembling)."""
    specs = [
        getattr(context, role) for role in ("rewrite_model", "classify_model", "gate_model", "generate_model")
    ]
    if getattr(context, "clarify", False):
        specs.append(context.clarify_model)
    candidates = getattr(context, "candidates", ())
    if len(candidates) >= 2:
        specs += [c.model for c in candidates] + [context.judge_model]
    return specs


def default_endpoint_limit(context: Any, concurrency: int) -> int:
    """One request in flight per task, times the candidates an ensemble sends at once."""
    return concurrency * max(1, len(getattr(context, "candidates", ())))


def throughput_lines(summary: Any) -> list[str]:
    """Run-summary lines: tasks per second at the run's concurrency, requests in flight per endpoint, notes."""
    lines = []
    if summary.answered and summary.wall_seconds > 0:
        lines.append(
            f"concurrency {summary.concurrency}: {summary.answered} tasks in {summary.wall_seconds:.1f} s "
            f"wall, {summary.answered / summary.wall_seconds:.2f} tasks/s"
        )
    for url, (limit, peak, requests) in sorted(summary.endpoints.items()):
        if requests:
            lines.append(f"endpoint {url}: {requests} requests, at most {peak} in flight (limit {limit})")
    lines.extend(f"note: {note}" for note in summary.notes)
    return lines
