"""The one node wrapper every node runs in: its status line, its model calls and time, its failures."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.types import Overwrite

from mtrag_graph.models.calls import CallLog, recording
from mtrag_graph.nodekit.events import STEP, emit
from mtrag_graph.stages import label_of
from mtrag_graph.state import AbstainReason, State, declare, plain, state_keys
from mtrag_graph.tasks import TaskError

logger = logging.getLogger("mtrag_graph")


Node = Callable[..., dict[str, Any]]


class UndeclaredKey(TypeError):
    """A node returned a key the state does not declare (LangGraph would silently drop it)."""


def guarded(node: Node | None = None, *, writes: type | None = None) -> Any:
    """The one node wrapper: records the node's model calls and time, and turns a failure into an abstention.

    The wrapper sends the node's status line to the stream (``events.STEP``, the label of its stage).
    The node returns only its decisions; the wrapper adds ``model_calls`` (every model call the node
    made, recorded by a ``CallLog`` callback handler) and ``node_seconds``. Bad input (``TaskError``)
    still raises: it is the caller's to report; so do LangGraph's control-flow exceptions
    (``interrupt()`` raises one to pause the run). ``writes``: a ``TypedDict`` of the keys the node
    writes that ``State`` does not have (``@guarded(writes=...)``); they join the graph's state. A key
    declared nowhere raises ``UndeclaredKey``.
    """
    if writes is not None:
        declare(writes)
    if node is None:
        return functools.partial(guarded, writes=writes)
    name = node.__name__

    label = label_of(name)

    @functools.wraps(node)
    def wrapper(state: State, runtime: Any) -> dict[str, Any]:
        if label:
            emit(STEP, node=name, label=label)
        log = CallLog(node=name)
        started = time.perf_counter()
        try:
            with recording(log):
                update = node(state, runtime)
        except (TaskError, GraphBubbleUp):
            raise
        except Exception as error:  # noqa: BLE001 - recorded in state, the run goes on
            logger.warning("node %s failed: %s: %s", name, type(error).__name__, error)
            update = {
                "error": {"node": name, "message": f"{type(error).__name__}: {error}"},
                "abstain_reason": AbstainReason.ERROR,
            }
        undeclared = set(update) - set(state_keys())
        if undeclared:
            raise UndeclaredKey(
                f"node {name} wrote {sorted(undeclared)}: declare them with @guarded(writes=...)"
            )
        seconds = time.perf_counter() - started
        bookkeeping = {"model_calls": log.records, "node_seconds": [{"node": name, "seconds": seconds}]}
        # a node that starts a run afresh (load_task) empties the run's bookkeeping: its own records start it
        return {
            **plain(update),
            **{
                key: Overwrite(records) if isinstance(update.get(key), Overwrite) else records
                for key, records in bookkeeping.items()
            },
        }

    return wrapper
