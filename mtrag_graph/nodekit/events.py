"""What a run tells a person watching it, as LangGraph custom stream events (``stream_mode="custom"``).

Three kinds, each a dict with an ``"mtrag"`` key:

- ``{"mtrag": "step", "node": NAME, "label": "rewriting the question"}``: a stage started (its status
  line, ``stages.label_of``); nodes without a label say nothing.
- ``{"mtrag": "text", "text": CHUNK}``: answer text that stands. The chunks, in order, are the final
  answer: a sentence is sent once the checks that could withdraw it have passed it
  (``mtrag_graph.nodekit.release``), and the rest when the run ends (the ``finish`` node).
- ``{"mtrag": "retract"}``: what was sent of this answer is withdrawn and the answer follows whole. The
  checks of the sent sentences are the final checks, so this happens only when a later part of the
  answer makes the whole of it fail (rare; counted in benchmarks/results/ by ``bench``).

Outside a run (a node called directly, in a test) ``emit`` does nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

STEP, TEXT, RETRACT = "step", "text", "retract"


def emit(kind: str, **fields: Any) -> None:
    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer({"mtrag": kind, **fields})
