"""Send what the stream has not shown of the final answer; every run that answers ends here.

While the answer is written only the sentences the checks passed are sent (``mtrag_graph.nodes.release``);
the rest of the final answer (its last sentence, or the whole of an abstention, a clarifying question,
an ensemble's pick) is sent now. When the final answer does not begin with what was shown, what was
shown is withdrawn first (``events.RETRACT``) and the answer follows whole.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.events import RETRACT, TEXT, emit
from mtrag_graph.state import State


def finish(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    answer = state.get("answer") or ""
    shown = state.get("shown") or ""
    if shown and not answer.startswith(shown):
        emit(RETRACT)
        shown = ""
    if len(answer) > len(shown):
        emit(TEXT, text=answer[len(shown) :])
    return {"shown": answer}
