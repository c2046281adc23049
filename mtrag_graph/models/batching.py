"""Embedding requests of concurrent tasks merged into shared batches (``MTRAG_EMBED_MERGE=1``).

With several tasks in flight, each rerank node asks the embedder for a handful of texts (the question
and its passages). ``CoalescingEncoder`` runs one encode at a time; the requests that arrive while one
runs wait and then go together as the next batch, so N tasks cost a few large forward passes instead
of N small ones running side by side. A lone request is encoded at once: nothing waits for a batch
to fill, so one task at a time is exactly as fast as without it.

Off by default, as measured (benchmarks/results/throughput.md): on a CPU, merged passes cost the same
CPU per task as separate ones and need a third to a quarter of the peak memory with 16 to 64 tasks in
flight, but a single thread then computes where 16 or 64 would each take their share of the cores, so
tasks per second were lower on the shared 2-core machine measured. Turn it on where memory is the
limit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class _Request:
    texts: list[str]
    result: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class BatchStats:
    calls: int = 0  # encode calls made
    requests: int = 0  # requests served
    texts: int = 0
    largest: int = 0  # most requests merged into one call


@dataclass
class CoalescingEncoder:
    """A thread-safe ``encode(texts) -> rows`` that merges concurrent requests (``max_texts`` per call)."""

    encode: Callable[[list[str]], np.ndarray]
    max_texts: int = 256
    stats: BatchStats = field(default_factory=BatchStats)
    _queue: list[_Request] = field(default_factory=list)
    _busy: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def __call__(self, texts: list[str]) -> np.ndarray:
        request = _Request(list(texts))
        with self._cond:
            self._queue.append(request)
        while True:
            with self._cond:
                while not request.done and self._busy:
                    self._cond.wait()
                if request.done:
                    return self._outcome(request)
                # nobody is encoding: this thread encodes what is queued (its own request may be
                # behind a full batch, then it goes round again)
                self._busy = True
                batch = self._take()
            try:
                self._run(batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _take(self) -> list[_Request]:
        """Queued requests up to ``max_texts`` texts (always at least the first one)."""
        batch: list[_Request] = []
        size = 0
        while self._queue and (not batch or size + len(self._queue[0].texts) <= self.max_texts):
            request = self._queue.pop(0)
            batch.append(request)
            size += len(request.texts)
        return batch

    def _run(self, batch: list[_Request]) -> None:
        texts = [t for request in batch for t in request.texts]
        try:
            rows = np.asarray(self.encode(texts))
        except BaseException as error:  # noqa: BLE001 - handed to every waiting request
            for request in batch:
                request.error, request.done = error, True
            return
        start = 0
        for request in batch:
            request.result = rows[start : start + len(request.texts)]
            request.done = True
            start += len(request.texts)
        self.stats.calls += 1
        self.stats.requests += len(batch)
        self.stats.texts += len(texts)
        self.stats.largest = max(self.stats.largest, len(batch))

    @staticmethod
    def _outcome(request: _Request) -> np.ndarray:
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result
