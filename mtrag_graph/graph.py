"""The controller graph: validate, (clarify: given passages), precheck, rewrite, classify, select history,
(retrieve), rerank, (clarify: retrieved passages), gate, generate (or, with two or more candidates
configured, fan out to the candidates and judge them), accept (the verdict: keep, retry once, or
decline), abstain.

Routing lives here and only here: ``ROUTES`` says where each node goes next. Every route comes from
one factory, ``next_or_abstain``: go on to the next node (or the one a small ``choose`` function
picks), or to ``abstain`` when a node stopped the run. Nodes never know what runs next. To add a node
on the main line, write its module in ``nodes/`` and add it to ``NODES`` and ``ROUTES`` below; a user
can also put a node of their own on an existing edge (``Insertion``) without editing this file.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mtrag_graph.context import Context
from mtrag_graph.nodes.abstain import abstain
from mtrag_graph.nodes.accept_answer import accept_answer
from mtrag_graph.nodes.answerability_gate import answerability_gate
from mtrag_graph.nodes.ask_user import ask_user
from mtrag_graph.nodes.clarify import clarify
from mtrag_graph.nodes.classify_relation import classify_relation
from mtrag_graph.nodes.evidence_precheck import evidence_precheck
from mtrag_graph.nodes.finish import finish
from mtrag_graph.nodes.generate import generate
from mtrag_graph.nodes.generate_candidate import generate_candidate
from mtrag_graph.nodes.judge_candidates import judge_candidates
from mtrag_graph.nodes.load_task import load_task
from mtrag_graph.nodes.rerank import rerank
from mtrag_graph.nodes.retrieve import retrieve
from mtrag_graph.nodes.rewrite import global_rewrite, local_rewrite
from mtrag_graph.nodes.select_history import select_history
from mtrag_graph.state import (
    InputState,
    OutputState,
    State,
    accumulated_keys,
    graph_schema,
    needs_retrieval,
    retrieved_setting,
    without,
)

Choose = Callable[[State, Runtime[Context]], Any]
FINISH = "finish"  # every answer, abstention and clarifying question ends the run there (nodes/finish.py)


def stopped(state: Mapping[str, Any]) -> bool:
    """A node recorded an error or an abstain reason: the run goes to ``abstain``."""
    return bool(state.get("error")) or state.get("abstain_reason") is not None


@dataclass(frozen=True)
class Route:
    """Where a node goes next: ``destinations[0]``, or what ``choose`` picks; ``abstain`` when stopped."""

    destinations: tuple[str, ...]
    choose: Choose | None = None

    def router(self, source: str) -> Callable[..., Any]:
        def route(state: State, runtime: Runtime[Context]) -> Any:
            if stopped(state):
                return "abstain"
            return self.choose(state, runtime) if self.choose else self.destinations[0]

        route.__name__ = route.__qualname__ = f"route_after_{source}"
        return route


def next_or_abstain(*destinations: str, choose: Choose | None = None) -> Route:
    """The one router factory: the next node (or ``choose``'s pick among ``destinations``), or abstain."""
    return Route(destinations, choose)


def _answered_or(next_node: str) -> Choose:
    """End the run when the node wrote a final answer (a clarifying question), else go on."""
    return lambda state, runtime: FINISH if state.get("answer") else next_node


def _kept_or_retry(next_node: str) -> Choose:
    """After the verdict: a kept answer goes on to ``next_node``, a retried draft back to generate."""
    return lambda state, runtime: next_node if state.get("answer") else "generate"


def _clarify_on(runtime: Runtime[Context]) -> bool:
    return bool(runtime.context.clarify)


# clarify needs the passages the turn will be answered from: the given ones right after load_task (it
# must also see turns without passages, which evidence_precheck would turn into "I don't know"), the
# retrieved ones after rerank (full RAG: before that there are none, or only ones the user never sees)
def _clarify_when_on(state: State, runtime: Runtime[Context]) -> str:
    return "clarify" if _clarify_on(runtime) and not retrieved_setting(state) else "evidence_precheck"


def _clarify_retrieved_when_on(state: State, runtime: Runtime[Context]) -> str:
    asked = bool(state.get("clarification"))  # once per turn: not again after the user's reply
    return (
        "clarify" if _clarify_on(runtime) and retrieved_setting(state) and not asked else "answerability_gate"
    )


def _after_clarify(state: State, runtime: Runtime[Context]) -> str:
    if state.get("answer"):  # the clarifying question is the final answer
        return FINISH
    clarification = state.get("clarification") or {}
    if clarification.get("asked") and "reply" not in clarification:  # the user is asked, and replies
        return "ask_user"
    if retrieved_setting(state) and not clarification.get("reply"):
        return "answerability_gate"
    # given passages, or the user's reply (chat) that changes the question: rewrite and retrieve for it
    return "evidence_precheck"


def _retrieve_when_needed(state: State, runtime: Runtime[Context]) -> str:
    return "retrieve" if needs_retrieval(state) else "rerank"


def _answer_or_fan_out(state: State, runtime: Runtime[Context]) -> str | list[Send]:
    """Abstain on a "no", generate one answer, or fan out to every configured candidate (two or more)."""
    if state.get("gate") == "no":
        return "abstain"
    if len(runtime.context.candidates) < 2:
        return "generate"
    payload = without(state, accumulated_keys())  # each branch sees the state, not the run's bookkeeping
    return [
        Send("generate_candidate", {**payload, "candidate_index": i})
        for i in range(len(runtime.context.candidates))
    ]


NODES: tuple[Callable[..., Any], ...] = (
    load_task,
    clarify,
    ask_user,
    evidence_precheck,
    global_rewrite,
    classify_relation,
    select_history,
    local_rewrite,
    retrieve,
    rerank,
    answerability_gate,
    generate_candidate,
    judge_candidates,
    generate,
    accept_answer,
    abstain,
    finish,
)
ROUTES: dict[str, Route] = {
    "load_task": next_or_abstain("clarify", "evidence_precheck", choose=_clarify_when_on),
    "clarify": next_or_abstain(
        "evidence_precheck", "answerability_gate", "ask_user", FINISH, choose=_after_clarify
    ),
    "ask_user": next_or_abstain("evidence_precheck", "answerability_gate", choose=_after_clarify),
    "evidence_precheck": next_or_abstain("global_rewrite"),
    "global_rewrite": next_or_abstain("classify_relation"),
    "classify_relation": next_or_abstain("select_history"),
    "select_history": next_or_abstain("local_rewrite"),
    "local_rewrite": next_or_abstain("retrieve", "rerank", choose=_retrieve_when_needed),
    "retrieve": next_or_abstain("rerank"),
    "rerank": next_or_abstain("clarify", "answerability_gate", choose=_clarify_retrieved_when_on),
    # "generate_candidate" is reached by Send (one branch per candidate); listed for the drawn graph
    "answerability_gate": next_or_abstain("generate", "generate_candidate", choose=_answer_or_fan_out),
    "judge_candidates": next_or_abstain("accept_answer"),
    "generate": next_or_abstain("accept_answer"),
    "accept_answer": next_or_abstain("generate", FINISH, choose=_kept_or_retry(FINISH)),
}
# Every destination each router can return (for the drawn graph and for insertions).
DESTINATIONS: dict[str, tuple[str, ...]] = {
    source: ("abstain", *route.destinations) for source, route in ROUTES.items()
}


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


def run_context(context_schema: type, context: Any, config: RunnableConfig | None) -> Any:
    """The run's settings: ``context`` (an instance or a dict of settings; none: the default pipeline),
    with any setting named in ``config["configurable"]`` applied over it (validated like any setting).

    LangGraph gives nodes only ``context``; a setting passed the older way, as a ``configurable`` key
    (``config={"configurable": {"top_k": 1}}``, a LangGraph server's assistant config), would be
    silently ignored. The server's own keys (``thread_id``, ``assistant_id``, ...) are no setting names.
    """
    if context is None:
        context = context_schema()
    elif isinstance(context, Mapping):
        context = context_schema(**context)
    configurable = (config or {}).get("configurable") or {}
    names = {field.name for field in dataclasses.fields(context_schema)}
    overrides = {key: value for key, value in configurable.items() if key in names}
    return dataclasses.replace(context, **overrides) if overrides else context


def with_settings(function: Callable[..., Any], context_schema: type = Context) -> Callable[..., Any]:
    """``function`` (a node or a router) given the run's settings as ``runtime.context``: ``run_context``
    over what LangGraph passed, so a run given no context runs the default pipeline however the graph
    was compiled (``build_graph()`` or ``build_graph().builder.compile(...)``).

    LangGraph hands a node or router its ``runtime`` (and ``config``, ...) by keyword, as its signature
    asks; the wrapper keeps that signature and changes nothing else.
    """

    def settled(kwargs: dict[str, Any]) -> dict[str, Any]:
        runtime = kwargs.get("runtime")
        if isinstance(runtime, Runtime):
            context = run_context(context_schema, runtime.context, get_config())
            kwargs["runtime"] = runtime.override(context=context)
        return kwargs

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def run_async(state: Any, **kwargs: Any) -> Any:
            return await function(state, **settled(kwargs))

        return run_async

    @functools.wraps(function)
    def run(state: Any, **kwargs: Any) -> Any:
        return function(state, **settled(kwargs))

    return run


def build_graph(
    *,
    insert: Sequence[Insertion] = (),
    checkpointer: Any = None,
    name: str = "mtrag-graph",
    context_schema: type = Context,
    start: str = "load_task",
    stop_after: str | None = None,
    output: Literal["reply", "state"] = "reply",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build and compile the graph. ``insert`` adds user nodes on existing edges.

    ``output``: what a run returns: ``"reply"`` (``state.OutputState``: the messages, the last one the
    reply), or ``"state"``, the whole state with every decision (the benchmark's predictions, the
    decision benchmarks, tests). The pipeline is the same.

    ``start`` / ``stop_after``: the same graph entered at another node (its input is then a ``State``,
    as that node would see it) and ended after a node (the route after it goes to the end): the
    decision benchmark runs the gate and what follows it this way (``decisions/run.py``).
    """
    if start not in ROUTES or (stop_after is not None and stop_after not in ROUTES):
        raise ValueError(f"start and stop_after name a node of the main line: {', '.join(ROUTES)}")
    schema = graph_schema()  # State and the keys the nodes declared
    input_schema = InputState if start == "load_task" else schema
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        schema,
        context_schema=context_schema,
        input_schema=input_schema,
        output_schema=OutputState if output == "reply" else schema,
    )
    settle = functools.partial(with_settings, context_schema=context_schema)
    for node in NODES:
        builder.add_node(settle(node), input_schema=schema)
    redirects: dict[tuple[str, str], str] = {}
    for insertion in insert:
        if insertion.name in builder.nodes:
            raise ValueError(f"a node named '{insertion.name}' already exists")
        if insertion.before == "generate_candidate":  # Send targets the node directly, past any insertion
            raise ValueError("candidate branches are started by Send; insert after judge_candidates instead")
        if insertion.before not in DESTINATIONS.get(insertion.after, ()):
            raise ValueError(
                f"there is no edge {insertion.after} -> {insertion.before} to insert '{insertion.name}' on"
            )
        edge = (insertion.after, insertion.before)
        target = redirects.get(edge, insertion.before)
        redirects[edge] = insertion.name
        builder.add_node(insertion.name, settle(insertion.node), input_schema=schema)
        after = next_or_abstain(target, FINISH, choose=_answered_or(target))
        builder.add_conditional_edges(
            insertion.name,
            settle(after.router(insertion.name)),
            {"abstain": "abstain", FINISH: FINISH, target: target},
        )
    builder.add_edge(START, start)
    for source, route in ROUTES.items():
        if source == stop_after:
            builder.add_edge(source, END)
            continue
        path_map: dict[Hashable, str] = {
            dest: redirects.get((source, dest), dest) for dest in DESTINATIONS[source]
        }
        builder.add_conditional_edges(source, settle(route.router(source)), path_map)
    # every candidate branch ends here; the judge runs once, after the last of them
    builder.add_edge("generate_candidate", "judge_candidates")
    builder.add_edge("abstain", FINISH)
    builder.add_edge(FINISH, END)
    return builder.compile(checkpointer=checkpointer, name=name)


graph = build_graph()  # langgraph.json's graph: messages in, the reply out
