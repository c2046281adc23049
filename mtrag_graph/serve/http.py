"""HTTP/1.1 for ``mtrag-graph serve``: uvicorn's h11 protocol, with a deadline for a request's head.

uvicorn closes a connection idle between requests, but waits without end for a client that sends a
request's head (its line and headers) a byte at a time: a few hundred such clients hold as many
connections open. Here a connection whose next request head has not arrived ``HEAD_TIMEOUT_S`` after
it opened (or after its last response) is closed. A slow body is the app's to time (``BodyLimit``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 20.0


class HeadDeadlineProtocol(H11Protocol):
    """``H11Protocol`` closing a connection whose request head is slower than ``HEAD_TIMEOUT_S``."""

    head_timeout_s = HEAD_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None

    def _start_head_deadline(self) -> None:
        self._cancel_head_deadline()
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_too_slow)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.cycle is None or self.cycle.response_complete:  # no request is being answered
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_deadline()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's head arrived
            self._cancel_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._start_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)
