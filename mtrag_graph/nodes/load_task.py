"""Validate the caller's task dict into the fields the graph works on."""

from __future__ import annotations

from typing import Any

from mtrag_graph.nodes._common import guarded
from mtrag_graph.state import State
from mtrag_graph.tasks import parse_task


@guarded
def load_task(state: State, runtime: Any) -> dict[str, Any]:
    task = parse_task(state.get("task"))
    return {
        "task_id": task.task_id,
        "history": [turn.model_dump() for turn in task.history],
        "question": task.question,
        "passages": None if task.passages is None else [p.model_dump() for p in task.passages],
        # a thread's earlier run left its outcome in the state (a served graph, a checkpointer): the
        # routers and the stream read these, so each run starts them afresh
        "retries": 0,
        "abstain_reason": None,
        "error": None,
        "answer": "",
        "shown": "",
        "clarification": {},
        "answer_problems": [],
        "decline_retried": False,
    }
