"""Embedding requests of concurrent tasks share forward passes; each caller gets its own rows back."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mtrag_graph.models.batching import CoalescingEncoder
from mtrag_graph.runtime.concurrency import run_bounded


def lengths(texts: list[str]) -> np.ndarray:
    """A stand-in encoder: one row per text, [length, first character code]."""
    return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def test_every_caller_gets_its_own_rows_under_concurrency():
    encoder = CoalescingEncoder(lengths)
    requests = [[f"{chr(97 + i % 26)}{'x' * i}", f"{chr(65 + i % 26)}{'y' * (i + 1)}"] for i in range(64)]
    results = dict(run_bounded(lambda i: encoder(requests[i]), range(64), 16))
    for i, rows in results.items():
        np.testing.assert_array_equal(rows, lengths(requests[i]))
    assert encoder.stats.requests == 64 and encoder.stats.texts == 128


def test_requests_arriving_during_an_encode_go_together_in_the_next_one():
    release, entered = threading.Event(), threading.Event()
    calls: list[list[str]] = []

    def slow(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        if len(calls) == 1:
            entered.set()
            release.wait(30)
        return lengths(texts)

    encoder = CoalescingEncoder(slow)
    first = threading.Thread(target=encoder, args=(["first"],))
    first.start()
    entered.wait(30)
    others = [threading.Thread(target=encoder, args=([f"t{i}", f"u{i}"],)) for i in range(3)]
    for thread in others:
        thread.start()
    wait_for(lambda: len(encoder._queue) == 3, "three queued requests")
    release.set()
    for thread in [first, *others]:
        thread.join(30)
    assert calls[0] == ["first"]
    assert len(calls) == 2 and sorted(calls[1]) == sorted(f"{p}{i}" for i in range(3) for p in "tu")
    assert encoder.stats.largest == 3


def test_a_batch_never_exceeds_max_texts_and_no_request_is_left_behind():
    sizes: list[int] = []

    def recording(texts: list[str]) -> np.ndarray:
        sizes.append(len(texts))
        return lengths(texts)

    encoder = CoalescingEncoder(recording, max_texts=7)
    results = dict(run_bounded(lambda i: encoder(["a" * (i + 1)] * 3), range(20), 8))
    assert all(rows.shape == (3, 2) and rows[0, 0] == i + 1 for i, rows in results.items())
    assert sum(sizes) == 60 and max(sizes) <= 7  # two requests of 3 texts fit in 7, three do not


def test_an_encoder_error_reaches_every_request_of_its_batch():
    def broken(texts: list[str]) -> np.ndarray:
        raise RuntimeError("encoder down")

    encoder = CoalescingEncoder(broken)
    with pytest.raises(RuntimeError, match="encoder down"):
        encoder(["a"])
    errors = []
    threads = [threading.Thread(target=lambda: _capture(encoder, errors)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(errors) == 4 and all("encoder down" in e for e in errors)


def _capture(encoder: CoalescingEncoder, errors: list[str]) -> None:
    try:
        encoder(["b"])
    except RuntimeError as error:
        errors.append(str(error))
