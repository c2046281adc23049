"""Stream only what stands: which part of a draft may be shown while the model is still writing it.

A sentence of the draft is shown once the checks that could withdraw it have passed it
(``judging.verdict.standing_text``, which the generating node hands to ``Release``): the answer
check (``judging.verdict.check_draft``: a decline, a draft with problems, an echoed prompt are
held, and so is a "how many" answer still without its number) and the grounding check
(``judging.verdict.ground``: a sentence the passages do not back is never shown). Each check runs
on the draft cut after its last complete sentence, as if the draft ended there; what that answer would
be is what may be shown, as long as it continues what was shown before. The last sentence waits for
the end of the run (it may be cut off, or trimmed), and so does everything when a later signal is still
to come (the decline probability with retrieved passages, a yes/no answer's quote), or when the verdict's
combiner would decline what is written so far. The ``finish`` node sends what remains of the
final answer, or, when it does not begin with what was shown, withdraws it (``events.RETRACT``).

The cost is about one sentence: the first text is shown when the second sentence starts (a one-sentence
answer comes whole at the end). Measured in benchmarks/results/throughput.md ("First shown text").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessageChunk
from langgraph.graph.message import push_message

from mtrag_graph.nodekit.events import TEXT, emit
from mtrag_graph.text import sentence_spans


def show(text: str, state: Mapping[str, Any]) -> None:
    """Send ``text`` (answer text that stands) to a person: a custom ``text`` event, and in
    ``stream_mode="messages"`` a chunk of the run's reply message (``reply_id``, the id of the
    ``AIMessage`` the run ends with), so a LangGraph chat client shows only what stands.

    The model's own tokens stay out of that stream (every model call is tagged ``nostream``): what
    it shows comes from here, through LangGraph's ``push_message``, which streams a message without
    writing it to the state (``state_key=None``: the reply joins ``messages`` once, in ``finish``).
    """
    emit(TEXT, text=text)
    reply_id = state.get("reply_id")
    if not reply_id:  # a run entered past load_task (``build_graph(start=...)``) makes no reply message
        return
    try:
        push_message(AIMessageChunk(content=text, id=reply_id), state_key=None)
    except RuntimeError:  # not inside a graph run
        return


def complete_sentences(draft: str) -> str:
    """``draft`` up to the end of its last sentence that another sentence follows ('' when none)."""
    spans = sentence_spans(draft)
    return draft[: spans[-2][1]] if len(spans) >= 2 else ""


class Release:
    """Receives the draft's tokens (``invoke_text(on_token=...)``) and sends what stands (``events.TEXT``).

    ``standing``: what the checks would keep of a draft ('' when they would hold it; the node's checks,
    ``judging.verdict.standing_text``). ``shown``: what earlier drafts of this run already showed; a
    retry's text is shown only where it continues it. ``finish``: the node's own post-processing of the
    reply (the candidate's citation markers), applied to the draft before it is checked.
    """

    def __init__(
        self,
        state: Mapping[str, Any],
        standing: Callable[[str], str],
        finish: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.state = state
        self.standing = standing
        self.finish = finish
        self.shown = str(state.get("shown") or "")
        self.draft = ""
        self.checked = ""  # the last complete-sentence prefix checked
        self.attempt: UUID | None = None

    def token(self, text: str, attempt: UUID) -> None:
        if attempt != self.attempt:  # a transient error started the reply over
            self.attempt, self.draft, self.checked = attempt, "", ""
        self.draft += text
        prefix = complete_sentences(self.draft)
        if len(prefix) <= len(self.checked):
            return
        self.checked = prefix
        standing = self.standing(self.finish(prefix))
        if len(standing) > len(self.shown) and standing.startswith(self.shown):
            show(standing[len(self.shown) :], self.state)
            self.shown = standing
