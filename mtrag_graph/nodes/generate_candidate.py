"""One answer candidate (model x prompt variant), run as a ``Send`` branch after the gate.

A failing candidate (an error, an empty or unusable reply) is recorded in its entry and
dropped by the judge; it never stops the run. Requests to one remote endpoint are capped with every
other call's (``models.endpoints``); local llama.cpp models serialise their own calls (a lock per model).
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models import get_chat_model, invoke_text, model_name
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.build import answer_messages
from mtrag_graph.state import State
from mtrag_graph.text import declines
from mtrag_graph.text.answers import answer_problems, clean_answer

# Replies the judge cannot use at all; other flaws are for the judge and the verdict to weigh.
UNUSABLE = {"empty answer", "echoes the prompt"}
REPLY_EXCERPT_CHARS = 80  # of an unusable reply, recorded in its error


class CandidateBranch(State, total=False):
    """A branch's input (the ``Send`` payload): the state after the gate, and which candidate to run."""

    candidate_index: int


@guarded
def generate_candidate(state: CandidateBranch, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    index = state["candidate_index"]
    candidate = context.candidates[index]
    entry: dict[str, Any] = {
        "index": index,
        "name": candidate.label,
        "model": model_name(candidate.model),
        "variant": candidate.variant,
        "text": None,
        "error": None,
    }
    started = time.perf_counter()
    try:
        model = get_chat_model(candidate.model)
        reply = invoke_text(
            model, answer_messages(state, context, candidate), max_tokens=context.answer_max_tokens
        )
        raw = str(reply.content)
        text = clean_answer(candidate.finish(raw))
        entry.update(raw=raw, finish_reason=(reply.response_metadata or {}).get("finish_reason"))
        unusable = set(answer_problems(text, state["question"], False)) & UNUSABLE
        if unusable:
            entry["error"] = f"unusable reply ({', '.join(sorted(unusable))}): {raw[:REPLY_EXCERPT_CHARS]!r}"
        else:
            entry.update(text=text, declined=declines(text))
    except Exception as error:  # noqa: BLE001 - one candidate failing is recorded, the others go on
        entry["error"] = f"{type(error).__name__}: {error}"
    entry["seconds"] = round(time.perf_counter() - started, 3)
    return {"candidate_answers": [entry]}
