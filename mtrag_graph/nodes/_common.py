"""What every node shares: the node wrapper (bookkeeping and failures), and conversation pairs."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.errors import GraphBubbleUp

from mtrag_graph.models.calls import CallLog, recording
from mtrag_graph.state import AbstainReason
from mtrag_graph.tasks import TaskError

logger = logging.getLogger("mtrag_graph")


def guarded(node: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The one node wrapper: records the node's model calls and time, and turns a failure into an abstention.

    The node returns only its decisions; the wrapper adds ``model_calls`` (every model call the node
    made, recorded by a ``CallLog`` callback handler) and ``node_seconds``. Bad input (``TaskError``)
    still raises: it is the caller's to report; so do LangGraph's control-flow exceptions
    (``interrupt()`` raises one to pause the run).
    """

    @functools.wraps(node)
    def wrapper(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
        log = CallLog(node=node.__name__)
        started = time.perf_counter()
        try:
            with recording(log):
                update = node(state, runtime)
        except (TaskError, GraphBubbleUp):
            raise
        except Exception as error:  # noqa: BLE001 - recorded in state, the run goes on
            logger.warning("node %s failed: %s: %s", node.__name__, type(error).__name__, error)
            update = {
                "error": {"node": node.__name__, "message": f"{type(error).__name__}: {error}"},
                "abstain_reason": AbstainReason.ERROR,
            }
        seconds = time.perf_counter() - started
        update = {
            **update,
            "model_calls": log.records,
            "node_seconds": [{"node": node.__name__, "seconds": seconds}],
        }
        _annotate(node.__name__, state, update, seconds)
        return update

    return wrapper


def _annotate(name: str, state: dict[str, Any], update: dict[str, Any], seconds: float) -> None:
    """Put the node's decisions on its traced run; tracing must never fail a run."""
    from mtrag_graph.tracing import annotate_current_run, node_metadata

    try:
        annotate_current_run(node_metadata(name, state, update, seconds))
    except Exception as error:  # noqa: BLE001 - a tracing problem is logged, never raised
        logger.debug("could not annotate the run of %s: %s", name, error)


def user_and_agent_pairs(history: Sequence[dict[str, str]]) -> list[tuple[str, str]]:
    """The conversation as (user question, agent answer) pairs, oldest first."""
    pairs: list[tuple[str, str]] = []
    question: str | None = None
    for turn in history:
        if turn["speaker"] == "user":
            if question is not None:
                pairs.append((question, ""))
            question = turn["text"]
        elif question is not None:
            pairs.append((question, turn["text"]))
            question = None
        elif pairs:  # consecutive agent turns: join them to the last answer
            pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]}\n{turn['text']}".strip())
    if question is not None:
        pairs.append((question, ""))
    return pairs


def pairs_to_turns(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for question, answer in pairs:
        turns.append({"speaker": "user", "text": question})
        if answer:
            turns.append({"speaker": "agent", "text": answer})
    return turns
