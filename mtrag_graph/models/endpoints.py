"""A cap on the requests in flight to each remote endpoint (an OpenAI-compatible base URL).

``endpoint_slot`` holds one of an endpoint's slots for the duration of a request, across every task and
node of the process (``models.calls.invoke_text`` takes one per attempt); ``endpoint_limit`` sets the cap
for a run (``batch.answer_tasks``: ``--endpoint-concurrency``, by default one request per task times the
candidates an ensemble sends at once). With no cap set, requests are not held back. In-process models
have no endpoint and never wait here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mtrag_graph.models.capabilities import capabilities_of


def endpoint_of(model: Any) -> str | None:
    """The base URL a chat model sends its requests to, or None for an in-process model."""
    return capabilities_of(model).endpoint


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
