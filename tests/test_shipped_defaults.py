"""The decisions users get by default, run fast: the shipped model-free gate classifier and the fitted
answer judge. The routing tests script the gate model and the LLM judge instead (``fake_context``), so
these are what keeps the defaults tested without MiniLM: the ``hashing:`` embedder stands in for it
(tests/test_real_models.py and the slow ensemble test run them with MiniLM)."""

from __future__ import annotations

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging import load_answer_judge
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.stages.candidates import Candidate
from mtrag_graph.testing import fake_context, make_task

EMBEDDER = "hashing:64"
PASSAGES = [
    "Bees find flowers by following the waggle dance of other bees, which shows the direction of the flowers.",
    "The round dance means that flowers with nectar are close to the hive.",
]
GOOD = "Bees find flowers by following the waggle dance of other bees."
GRAPH = build_graph(output="state")


def shipped_gate_context(**overrides) -> Context:
    """The shipped gate classifier (``gate_classifier="default"``); a gate model that fails if called."""
    assert Context.gate_classifier == "default", "the default this file tests has changed"
    return fake_context(
        gate_classifier="default", embedder=EMBEDDER, gate_model=ScriptedChatModel(responses=[]), **overrides
    )


def test_the_shipped_gate_answers_when_the_passages_speak_to_the_question_without_a_model_call():
    context = shipped_gate_context()
    state = GRAPH.invoke({"task": make_task(["How do bees find flowers?"], PASSAGES)}, context=context)
    assert state["gate"] == "yes" and state["abstain_reason"] is None
    assert context.gate_model.calls == []
    assert state["answer"] == "The answer is stated in the passage."


def test_the_shipped_gate_abstains_when_the_passages_are_about_something_else():
    context = shipped_gate_context()
    # no word in common (hashed words count function words too: "what is the ..." would look related)
    task = make_task(["Which currency does Peru use today?"], PASSAGES)
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["gate"] == "no" and state["abstain_reason"] is not None
    assert state["answer"] == context.idk_answer
    assert context.gate_model.calls == [] and context.generate_model.calls == []


def test_the_shipped_answer_judge_picks_the_supported_candidate_without_a_model_call():
    assert Context.judge_method == "answer", "the default this file tests has changed"
    judge = load_answer_judge(embedder=get_embedder(EMBEDDER))  # the shipped weights, hashed words
    answers = ["Bananas grow quickly in warm countries overseas.", "I don't know.", GOOD]
    candidates = tuple(
        Candidate(model=ScriptedChatModel(responses=[a], model_name=f"m{i}"), name=f"c{i}")
        for i, a in enumerate(answers)
    )
    context = fake_context(
        candidates=candidates, answer_judge=judge, judge_model=ScriptedChatModel(responses=[])
    )
    state = GRAPH.invoke({"task": make_task(["How do bees find flowers?"], PASSAGES)}, context=context)
    judgement = state["judgement"]
    assert context.judge_model.calls == []
    assert judgement["judge"].startswith("answer-judge")
    declined = {s["index"]: s["declined"] for s in judgement["scores"]}
    assert declined == {0: False, 1: True, 2: False}
    assert state["chosen_candidate"] == 2 and state["answer"] == GOOD
