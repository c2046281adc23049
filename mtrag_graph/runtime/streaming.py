"""Streaming a run to a person: the steps, then only the answer text that stands.

The graph sends custom stream events (``mtrag_graph.nodekit.events``): a status line when a stage starts, and
answer text once the checks that could withdraw it have passed it (``mtrag_graph.nodekit.release``; the
rest comes from the ``finish`` node). Joined in order, the text events are the final answer; a
``retract`` event (rare) withdraws what was shown and the answer follows whole. ``iter_events`` turns a
run of the graph into those events; ``chat``, ``examples/stream_answer.py`` and the served API show
exactly what it yields.

``stream_mode="messages"`` carries the same text, as chunks of the run's reply message (what a
LangGraph chat client shows); no model's raw tokens reach it. ``on_draft_token`` sees the draft's raw
tokens, for measuring only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from mtrag_graph.nodekit.events import RETRACT, STEP, TEXT
from mtrag_graph.runtime.checkpoints import pending_question, snapshot_question
from mtrag_graph.text import sentences

ANSWER_NODES = frozenset({"generate"})


class DraftTokens(BaseCallbackHandler):
    """Hands each raw token of the answer's model call (``ANSWER_NODES``) to ``on_token``."""

    def __init__(self, on_token: Callable[[str], None]) -> None:
        super().__init__()
        self.on_token = on_token
        self.drafts: set[UUID] = set()

    def on_chat_model_start(self, serialized, messages, *, run_id, metadata=None, **kwargs: Any) -> None:
        if (metadata or {}).get("langgraph_node") in ANSWER_NODES:
            self.drafts.add(run_id)

    def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        if run_id in self.drafts and isinstance(token, str):
            self.on_token(token)


def _pending_question(graph: Any, config: Mapping[str, Any], state: dict[str, Any]) -> str | None:
    """The clarifying question the run stopped on: in the last values, else in the saved thread."""
    question = pending_question(state)
    if question is None and (config.get("configurable") or {}).get("thread_id") and graph.checkpointer:
        question = snapshot_question(graph.get_state(config))
    return question


def iter_events(
    graph: Any,
    inputs: Any,
    *,
    context: Any = None,
    config: Mapping[str, Any] | None = None,
    on_draft_token: Callable[[str], None] | None = None,
) -> Iterator[tuple[str, Any]]:
    """Run ``graph`` and yield what a person sees, in order:

    ``("step", label)`` when a stage with a status line starts (repeats of the same line left out),
    ``("text", chunk)`` answer text that stands, ``("retract", None)`` what was shown is withdrawn,
    ``("interrupt", question)`` the run waits on the user's reply to a clarifying question, and last
    ``("done", values)`` with the run's final values (the reply is the last of their ``messages``). ``on_draft_token``: the raw draft's
    tokens, for measuring only.
    """
    config = dict(config or {})
    if on_draft_token is not None:
        config["callbacks"] = [*(config.get("callbacks") or []), DraftTokens(on_draft_token)]
    state: dict[str, Any] = {}
    label = None
    for namespace, mode, chunk in graph.stream(
        inputs, config, context=context, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "values":
            if not namespace:
                state = chunk
        elif isinstance(chunk, Mapping) and "mtrag" in chunk:
            kind = chunk["mtrag"]
            if kind == STEP and chunk.get("label") != label:
                label = chunk.get("label")
                yield "step", label
            elif kind == TEXT:
                yield "text", chunk["text"]
            elif kind == RETRACT:
                yield "retract", None
    question = _pending_question(graph, config, state)
    if question is not None:
        yield "interrupt", question
    yield "done", state


def run_streamed(
    graph: Any,
    inputs: Any,
    *,
    context: Any = None,
    config: Mapping[str, Any] | None = None,
    on_text: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``graph`` streaming the answer text that stands to ``on_text``.

    Returns the final state and the stream's timings: ``first_shown`` (seconds from the start to the
    first text shown), ``first_draft`` (to the model's first draft token, what a stream of raw tokens
    would have shown first), ``chunks`` (text events), ``retracted`` (retract events) and
    ``draft_withdrawn`` (whether a stream of the raw draft tokens would have shown a sentence the final
    answer does not keep).
    """
    started = time.perf_counter()
    timings: dict[str, Any] = {"first_shown": None, "first_draft": None, "chunks": 0, "retracted": 0}
    drafts: list[str] = []

    def draft_token(text: str) -> None:
        if text and timings["first_draft"] is None:
            timings["first_draft"] = time.perf_counter() - started
        drafts.append(text)

    state: dict[str, Any] = {}
    for kind, value in iter_events(graph, inputs, context=context, config=config, on_draft_token=draft_token):
        if kind == "text" and value:
            if timings["first_shown"] is None:
                timings["first_shown"] = time.perf_counter() - started
            timings["chunks"] += 1
            if on_text is not None:
                on_text(value)
        elif kind == "retract":
            timings["retracted"] += 1
        elif kind == "done":
            state = value
    answer = " ".join(str(state.get("answer") or "").split())
    timings["draft_withdrawn"] = any(" ".join(s.split()) not in answer for s in sentences("".join(drafts)))
    return state, timings
