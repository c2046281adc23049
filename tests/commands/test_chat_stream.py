"""The chat's terminal output: status line, the answer as it streams, its citation markers and sources."""

from __future__ import annotations

import io

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from mtrag_graph.commands.chat import stream_turn
from mtrag_graph.graph import build_graph
from mtrag_graph.testing import fake_context
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES

PASSAGES = [
    {"document_id": "bees", "title": "Honey bee dances", "text": "Bees dance to show where flowers are."},
    {"document_id": "fruit", "title": "Fruit", "text": "Ripe bananas are yellow."},
]


class Recording(io.StringIO):
    """A terminal's output that remembers each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def test_a_turn_shows_its_steps_streams_the_answer_and_cites_each_sentence():
    context = fake_context(
        generate=["Bees dance to show where the flowers are. Bananas are yellow."], grounding="facts"
    )
    out = Recording()
    state = stream_turn(
        build_graph(checkpointer=InMemorySaver()),
        {"messages": [HumanMessage("Why do bees dance?")], "contexts": PASSAGES},
        {"configurable": {"thread_id": "t"}},
        context,
        out,
    )
    text = out.getvalue()
    assert "... rewriting the question" in text and "... checking the passages" in text
    assert text.index("... writing the answer") < text.index("bot> Bees")
    # the first sentence was shown on its own, once the second one started and the checks passed it
    assert "Bees dance to show where the flowers are." in out.writes
    assert "bot> Bees dance to show where the flowers are. [1] Bananas are yellow. [2]" in text
    assert "[1] Honey bee dances (bees)" in text and "[2] Fruit (fruit)" in text
    assert state["messages"][-1].response_metadata["mtrag"]["citations"][0]["document_ids"] == ["bees"]


def test_a_clarifying_question_is_printed_and_the_turn_waits_for_the_reply():
    passages = [
        {"document_id": f"d{i}", "title": t, "text": x}
        for i, (t, x) in enumerate(zip(TITLES, LIBRARIES, strict=True))
    ]
    out = io.StringIO()
    state = stream_turn(
        build_graph(checkpointer=InMemorySaver()),
        {"messages": [HumanMessage("When does this library open?")], "contexts": passages},
        {"configurable": {"thread_id": "t"}},
        fake_context(clarify=True),
        out,
    )
    assert state["waiting"] == QUESTION_ASKED
    assert f"bot> {QUESTION_ASKED}\n" in out.getvalue() and "[1]" not in out.getvalue()
