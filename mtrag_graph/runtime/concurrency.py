"""Running many tasks at once: a bounded pool of tasks in flight (no package imports: anything may use it).

``run_bounded`` applies a function to items with at most N in flight (worker threads; N = 1 runs
inline, with no thread at all) and yields each result as it finishes, so the caller alone writes the
output file: lines never interleave, and a process killed at any moment loses only the tasks in flight,
which a resumed run redoes.

LangGraph nodes here are sync functions: a thread per task in flight is what ``ainvoke`` would do too
(it runs sync nodes in an executor), without an event loop in between. What the threads share is
thread-safe: the model factory, embedder and index registries take a lock; a llama.cpp model holds one
lock per model file, so local models keep one call at a time whatever the concurrency; the judge's
SQLite cache and the embedding cache lock each access. The requests in flight to one remote endpoint
are capped apart from this pool (``models.endpoints``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


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
