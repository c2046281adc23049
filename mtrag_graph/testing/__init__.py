"""Scripted stand-ins for trying the graph without a model: a Context of scripted fakes, and tasks.

Used by the tests and the docs' examples::

    from mtrag_graph.graph import build_graph
    from mtrag_graph.testing import fake_context, make_task

    state = build_graph(output="state").invoke({"task": make_task(["How do bees talk?"], ["Bees dance."])},
                                 context=fake_context(generate=["Bees dance."]))

The fakes answer in call order, never by reading the prompt, so a test fails when the graph calls a
model more, less, or in another order than it expects.
"""

from __future__ import annotations

from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.stages import model_settings

SCRIPTED_EXCHANGES = (
    64  # relation judgements scripted per fake classify model (the walk-back is capped lower)
)


def relation_judgements(related_to_question: list[str], related_to_answer: list[str]) -> list[str]:
    """The classify model's replies in call order: for each exchange judged, question then answer.

    Each list gives the replies for the first exchanges judged; its last reply repeats after that.
    """
    replies = []
    for i in range(SCRIPTED_EXCHANGES):
        replies.append(related_to_question[min(i, len(related_to_question) - 1)])
        replies.append(related_to_answer[min(i, len(related_to_answer) - 1)])
    return replies


def fake_context(
    *,
    rewrite: list[Any] | None = None,
    related_to_question: list[str] | None = None,
    related_to_answer: list[str] | None = None,
    gate: list[Any] | None = None,
    generate: list[Any] | None = None,
    **overrides: Any,
) -> Context:
    """A Context whose four model roles are scripted fakes; no model anywhere (reranking by word overlap,
    sentence vectors from hashed words)."""
    judgements = relation_judgements(related_to_question or ["yes"], related_to_answer or ["yes"])
    defaults: dict[str, Any] = {
        "rewrite_model": ScriptedChatModel(responses=rewrite or ["What is the rewritten question?"]),
        "classify_model": ScriptedChatModel(responses=judgements),
        "gate_model": ScriptedChatModel(responses=gate or ["yes"]),
        "generate_model": ScriptedChatModel(responses=generate or ["The answer is stated in the passage."]),
        "reranker": "lexical",
        "embedder": "hashing:64",  # the gate's evidence features (and any embedding reranker) without MiniLM
        "gate_classifier": None,  # the scripted gate model decides (the default classifier needs no model)
        # scripted answers are rarely in the scripted passages: routing tests leave the grounding check
        # out; tests/judging/test_grounding.py runs it (grounding="facts", the default of Context)
        "grounding": "off",
        # nor the decline probability: it would take a scripted reply (tests/judging/test_decline.py reads it)
        "sample_decline_threshold": None,
        # nor a yes/no answer's quote: its verdict would take a scripted reply (tests/judging/test_yes_no.py)
        "yes_no_quote": False,
        # routing tests script every model call; tests/nodes/test_clarify.py switches clarify on (the default)
        "clarify": False,
        # a turn without passages is decided by MiniLM cosines (judging/clarify_no_passages.py): tests that
        # switch clarify on decide such turns with the signals unless they set it (tests/judging)
        "clarify_no_passages": None,
    }
    merged = {**defaults, **overrides}
    # the rewrite model itself: no second rewrite unless a test scripts a model for it
    merged.setdefault("rewrite_retry_model", merged["rewrite_model"])
    return Context(**merged)


def endpoint_context(spec: str, **overrides: Any) -> Context:
    """A Context whose models all call ``spec`` (a stand-in or a real endpoint); nothing else
    loads a model (reranking by word overlap, sentence vectors from hashed words)."""
    roles = dict.fromkeys(model_settings(Context), spec)
    return Context(**{**roles, "reranker": "lexical", "embedder": "hashing:64", **overrides})


def make_task(turns: list[str], contexts: list[str] | None = None, task_id: str = "t<::>1") -> dict[str, Any]:
    """A task from alternating user/agent texts (the last is the user's question)."""
    speakers = ["user", "agent"]
    task: dict[str, Any] = {
        "task_id": task_id,
        "input": [{"speaker": speakers[i % 2], "text": text} for i, text in enumerate(turns)],
    }
    if contexts is not None:
        task["contexts"] = [{"document_id": f"d{i}", "text": text} for i, text in enumerate(contexts)]
    return task
