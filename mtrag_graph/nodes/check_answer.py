"""Clean the draft and judge it; a bad draft is retried once with a stricter prompt, then abstained.

The decision is ``judging.answer_check.check_draft``, which the stream's release also reads.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.answer_check import check_draft
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import State


@guarded
def check_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    return check_draft(state, runtime.context)
