"""The controller graph: validate, precheck, rewrite, classify, select history, (retrieve), rerank,
gate, generate (or, with two or more candidates configured, fan out to the candidates and judge
them), check (retry once), abstain.

Routing lives here, in small router functions; nodes never know what runs next. A user can insert a
node of their own between two existing ones (``Insertion``) without editing any node.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mtrag_graph.context import Context
from mtrag_graph.nodes.abstain import abstain
from mtrag_graph.nodes.answerability_gate import answerability_gate
from mtrag_graph.nodes.check_answer import check_answer
from mtrag_graph.nodes.classify_relation import classify_relation
from mtrag_graph.nodes.evidence_precheck import evidence_precheck, needs_retrieval
from mtrag_graph.nodes.generate import generate
from mtrag_graph.nodes.generate_candidate import PAYLOAD_FIELDS, generate_candidate
from mtrag_graph.nodes.judge_candidates import judge_candidates
from mtrag_graph.nodes.load_task import load_task
from mtrag_graph.nodes.rerank import rerank
from mtrag_graph.nodes.retrieve import retrieve
from mtrag_graph.nodes.rewrite import global_rewrite, local_rewrite
from mtrag_graph.nodes.select_history import select_history
from mtrag_graph.state import InputState, State


@dataclass(frozen=True)
class Insertion:
    """Put ``node`` (named ``name``) on the edge ``after`` -> ``before``.

    After the inserted node the graph goes on to ``before``, unless the node recorded an error or an
    abstain reason (-> ``abstain``) or wrote a final ``answer`` (-> end of the run).
    """

    name: str
    node: Callable[..., Any]
    after: str
    before: str


def _stopped(state: Mapping[str, Any]) -> bool:
    return bool(state.get("error")) or state.get("abstain_reason") is not None


def route_after_precheck(state: State) -> Literal["abstain", "global_rewrite"]:
    return "abstain" if _stopped(state) else "global_rewrite"


def route_after_global_rewrite(state: State) -> Literal["abstain", "classify_relation"]:
    return "abstain" if _stopped(state) else "classify_relation"


def route_after_classify(state: State) -> Literal["abstain", "select_history"]:
    return "abstain" if _stopped(state) else "select_history"


def route_after_history(state: State) -> Literal["abstain", "local_rewrite"]:
    return "abstain" if _stopped(state) else "local_rewrite"


def route_after_local_rewrite(state: State) -> Literal["abstain", "retrieve", "rerank"]:
    if _stopped(state):
        return "abstain"
    return "retrieve" if needs_retrieval(state) else "rerank"


def route_after_retrieve(state: State) -> Literal["abstain", "rerank"]:
    return "abstain" if _stopped(state) else "rerank"


def route_after_rerank(state: State) -> Literal["abstain", "answerability_gate"]:
    return "abstain" if _stopped(state) else "answerability_gate"


def route_after_gate(state: State, runtime: Runtime[Context]) -> str | list[Send]:
    """Abstain, generate one answer, or fan out to every configured candidate (two or more)."""
    if _stopped(state) or state.get("gate") == "no":
        return "abstain"
    candidates = runtime.context.candidates if runtime is not None else ()
    if len(candidates) < 2:
        return "generate"
    payload = {key: value for key, value in state.items() if key in PAYLOAD_FIELDS}
    return [Send("generate_candidate", {**payload, "candidate_index": i}) for i in range(len(candidates))]


def route_after_judge(state: State) -> Literal["abstain", "check_answer"]:
    return "abstain" if _stopped(state) else "check_answer"


def route_after_generate(state: State) -> Literal["abstain", "check_answer"]:
    return "abstain" if _stopped(state) else "check_answer"


def route_after_check(state: State) -> str:
    if _stopped(state):
        return "abstain"
    return END if state.get("answer") else "generate"


ROUTERS: dict[str, Callable[..., Any]] = {
    "evidence_precheck": route_after_precheck,
    "global_rewrite": route_after_global_rewrite,
    "classify_relation": route_after_classify,
    "select_history": route_after_history,
    "local_rewrite": route_after_local_rewrite,
    "retrieve": route_after_retrieve,
    "rerank": route_after_rerank,
    "answerability_gate": route_after_gate,
    "judge_candidates": route_after_judge,
    "generate": route_after_generate,
    "check_answer": route_after_check,
}
NODES: dict[str, Callable[..., Any]] = {
    "load_task": load_task,
    "evidence_precheck": evidence_precheck,
    "global_rewrite": global_rewrite,
    "classify_relation": classify_relation,
    "select_history": select_history,
    "local_rewrite": local_rewrite,
    "retrieve": retrieve,
    "rerank": rerank,
    "answerability_gate": answerability_gate,
    "generate_candidate": generate_candidate,
    "judge_candidates": judge_candidates,
    "generate": generate,
    "check_answer": check_answer,
    "abstain": abstain,
}
# Every destination each router can return (for the drawn graph and for insertions).
DESTINATIONS: dict[str, tuple[str, ...]] = {
    "evidence_precheck": ("abstain", "global_rewrite"),
    "global_rewrite": ("abstain", "classify_relation"),
    "classify_relation": ("abstain", "select_history"),
    "select_history": ("abstain", "local_rewrite"),
    "local_rewrite": ("abstain", "retrieve", "rerank"),
    "retrieve": ("abstain", "rerank"),
    "rerank": ("abstain", "answerability_gate"),
    # "generate_candidate" is reached by Send (one branch per candidate), listed for the drawn graph
    "answerability_gate": ("abstain", "generate", "generate_candidate"),
    "judge_candidates": ("abstain", "check_answer"),
    "generate": ("abstain", "check_answer"),
    "check_answer": ("abstain", "generate", END),
}


def _after_insertion(before: str) -> Callable[[State], str]:
    def route(state: State) -> str:
        if _stopped(state):
            return "abstain"
        return END if state.get("answer") else before

    return route


def build_graph(
    *,
    insert: Sequence[Insertion] = (),
    checkpointer: Any = None,
    name: str = "mtrag-graph",
    context_schema: type = Context,
):
    """Build and compile the graph. ``insert`` adds user nodes on existing edges."""
    builder = StateGraph(State, context_schema=context_schema, input_schema=InputState)
    for node_name, node in NODES.items():
        builder.add_node(node_name, node)
    redirects: dict[tuple[str, str], str] = {}
    for insertion in insert:
        if insertion.name in NODES:
            raise ValueError(f"a node named '{insertion.name}' already exists")
        edge = (insertion.after, insertion.before)
        if insertion.before == "generate_candidate":  # Send targets the node directly, past any insertion
            raise ValueError("candidate branches are started by Send; insert after judge_candidates instead")
        if insertion.before not in DESTINATIONS.get(insertion.after, ()) and edge != (
            "load_task",
            "evidence_precheck",
        ):
            raise ValueError(
                f"there is no edge {insertion.after} -> {insertion.before} to insert '{insertion.name}' on"
            )
        target = redirects.get(edge, insertion.before)
        redirects[edge] = insertion.name
        builder.add_node(insertion.name, insertion.node)
        builder.add_conditional_edges(
            insertion.name, _after_insertion(target), {"abstain": "abstain", END: END, target: target}
        )
    builder.add_edge(START, "load_task")
    first = redirects.get(("load_task", "evidence_precheck"), "evidence_precheck")
    builder.add_edge("load_task", first)
    for source, router in ROUTERS.items():
        path_map: dict[Hashable, str] = {
            dest: redirects.get((source, dest), dest) for dest in DESTINATIONS[source]
        }
        builder.add_conditional_edges(source, router, path_map)
    # every candidate branch ends here; the judge runs once, after the last of them
    builder.add_edge("generate_candidate", "judge_candidates")
    builder.add_edge("abstain", END)
    return builder.compile(checkpointer=checkpointer, name=name)


graph = build_graph()
