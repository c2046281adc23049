"""The docs' "Add a node on the main line" done for real: a node module and the two graph.py lines.

The node below is what ``mtrag_graph/nodes/passage_filter.py`` would hold; the monkeypatched
``NODES`` / ``ROUTES`` / ``DESTINATIONS`` are the diff to ``graph.py``. Nothing else is edited: its new
key reaches the graph's state, the prediction's route, the trace metadata and the candidate branches.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, TypedDict

import pytest
from langgraph.graph import END

from mtrag_graph import graph, state
from mtrag_graph.nodekit.wrapper import UndeclaredKey, guarded
from mtrag_graph.runtime.bookkeeping import route_of
from mtrag_graph.runtime.tracing import node_metadata
from mtrag_graph.stages.candidates import Candidate
from mtrag_graph.testing import fake_context, make_task

PASSAGES = ["Bees use the waggle dance to show the direction of flowers.", "Wasps sting."]


@pytest.fixture
def declared(monkeypatch):
    """A fresh registry of node-declared keys, so the scratch node leaves the package as it was."""
    monkeypatch.setattr(state, "_DECLARED", {})


def passage_filter_module():
    """mtrag_graph/nodes/passage_filter.py: the node, and the one key it writes that State lacks."""

    class PassageFilterWrites(TypedDict, total=False):
        passages_dropped: int

    @guarded(writes=PassageFilterWrites)
    def passage_filter(state: state.State, runtime: Any) -> dict[str, Any]:
        kept = [p for p in state.get("kept_passages") or [] if "bee" in p["text"].lower()]
        return {"kept_passages": kept, "passages_dropped": len(state.get("kept_passages") or []) - len(kept)}

    return passage_filter


def insert_on_the_main_line(monkeypatch, node) -> None:
    """graph.py: add the node to NODES, point rerank at it, give it a route."""
    nodes = list(graph.NODES)
    nodes.insert(nodes.index(graph.answerability_gate), node)
    routes = {**graph.ROUTES, "rerank": graph.next_or_abstain("passage_filter")}
    routes["passage_filter"] = graph.next_or_abstain("answerability_gate")
    monkeypatch.setattr(graph, "NODES", tuple(nodes))
    monkeypatch.setattr(graph, "ROUTES", routes)
    monkeypatch.setattr(graph, "DESTINATIONS", {s: ("abstain", *r.destinations) for s, r in routes.items()})


def test_a_node_and_its_new_key_need_only_its_module_and_two_graph_lines(monkeypatch, declared):
    insert_on_the_main_line(monkeypatch, passage_filter_module())
    run = graph.build_graph(output="state").invoke(
        {"task": make_task(["How do bees dance?"], PASSAGES)}, context=fake_context(generate=["Bees dance."])
    )
    assert run["passages_dropped"] == 1 and len(run["kept_passages"]) == 1
    assert route_of(run)["passages_dropped"] == 1  # a decision, in the prediction's route
    assert node_metadata("passage_filter", {}, {"passages_dropped": 1})["passages_dropped"] == 1


def test_the_candidate_branches_see_the_new_key(declared):
    passage_filter_module()
    model = fake_context().generate_model
    runtime = SimpleNamespace(
        context=fake_context(candidates=(Candidate(model=model), Candidate(model=model)))
    )
    after_gate = {"gate": "yes", "question": "How?", "passages_dropped": 1, "model_calls": [{"node": "x"}]}
    sends = graph._answer_or_fan_out(after_gate, runtime)
    assert [send.arg["passages_dropped"] for send in sends] == [1, 1]
    assert all("model_calls" not in send.arg for send in sends)  # the run's bookkeeping stays behind


def test_a_node_that_writes_an_undeclared_key_fails_loudly(monkeypatch, declared):
    @guarded
    def careless(run_state, runtime):
        return {"not_declared_anywhere": 1}

    with pytest.raises(UndeclaredKey, match="not_declared_anywhere"):
        careless({}, None)


def test_a_key_is_declared_once(declared):
    class Again(TypedDict, total=False):
        gate: str

    with pytest.raises(TypeError, match="already declared"):
        state.declare(Again)


def test_the_gate_and_what_follows_run_as_a_graph_entered_at_the_gate():
    context = fake_context(gate=["no"])
    entered = {"question": "How do bees dance?", "history": [], "kept_passages": [{"text": PASSAGES[0]}]}
    gate_only = graph.build_graph(start="answerability_gate", stop_after="answerability_gate", output="state")
    assert gate_only.invoke(entered, context=context)["gate"] == "no"
    assert "answer" not in gate_only.invoke(entered, context=fake_context(gate=["no"]))
    assert (
        graph.build_graph(start="answerability_gate", output="state").invoke(
            entered, context=fake_context(gate=["no"])
        )["answer"]
        == context.idk_answer
    )
    assert END not in graph.ROUTES
