"""Streaming a run: the answer's tokens as the model writes them, from ``stream_mode="messages"``.

Only ``generate`` streams its model call (the answer); every other call (rewrites, relation questions,
the gate, judges, the answer ensemble's candidates) is tagged ``nostream`` (``models.calls.invoke_text``)
and never reaches the stream. Filter on ``metadata["langgraph_node"]`` all the same: a node you insert
may call models of its own.

What streams is the model's draft. ``check_answer`` may still clean it, retry it (a second
``generate`` run streams under a new message id) or replace it with an abstention, and the grounding
check may cut sentences the passages do not back: the final ``answer`` is in the state at the end.
Arriving whole, with the final state: a clarifying question (it names the passages' alternatives
without a model call, and a model-written one is checked before it is shown), an evidence-first reply
(quotes, then the answer), and the answer of an ensemble (two or more candidates): the candidates are
written in parallel and the judge picks one only when all are done, so streaming them would show text
that may lose.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

ANSWER_NODES = frozenset({"generate"})


def is_answer_token(metadata: Mapping[str, Any]) -> bool:
    """Whether a ``stream_mode="messages"`` item comes from the answer's call."""
    return metadata.get("langgraph_node") in ANSWER_NODES


def run_streamed(
    graph: Any,
    inputs: Any,
    *,
    context: Any = None,
    config: Mapping[str, Any] | None = None,
    on_token: Callable[[str, Mapping[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], float | None]:
    """Run ``graph`` streaming the answer's tokens to ``on_token(text, metadata)``.

    Returns the final state and the seconds from the start to the answer's first non-empty token
    (None when no answer token came: an abstention before ``generate``, an ensemble).
    """
    started = time.perf_counter()
    first: float | None = None
    state: dict[str, Any] = {}
    for mode, chunk in graph.stream(
        inputs, dict(config or {}), context=context, stream_mode=["messages", "values"]
    ):
        if mode == "values":
            state = chunk
            continue
        message, metadata = chunk
        text = message.content if isinstance(message.content, str) else ""
        if not text or not is_answer_token(metadata):
            continue
        if first is None:
            first = time.perf_counter() - started
        if on_token is not None:
            on_token(text, metadata)
    return state, first
