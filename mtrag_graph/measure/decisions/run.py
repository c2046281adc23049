"""Run each decision node alone over its labelled set; one cached result per item (resumable).

Results go to ``<out>/results/<decision>-<split>-<fingerprint>.jsonl``. The fingerprint hashes the
Context (models, prompt texts, thresholds), so a changed setting starts a fresh file and an
interrupted run picks up where it stopped.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging.grounding import unsupported_facts
from mtrag_graph.judging.relation import judge_relation
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.nodes.answerability_gate import evidence_features
from mtrag_graph.nodes.clarify import clarifying_question, signal_of
from mtrag_graph.prompts.build import format_conversation, question_for_answering
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.stages import settings_of
from mtrag_graph.state import AbstainReason
from mtrag_graph.tasks import user_and_agent_pairs

logger = logging.getLogger("mtrag_graph.measure.decisions")

Decide = Callable[[dict[str, Any], Context], dict[str, Any]]
ITEM_FIELDS = ("item_id", "task_id", "kind", "domain", "label", "answerability", "multi_turn")


# The stages each decision runs: its cache key holds their settings (``stages.settings_of``: the stages
# they read from and ``common`` included), so a changed setting that a decision reads starts a fresh
# result file, and a setting added to one of these stages is in the key by its declaration.
DECISION_STAGES = {
    "gate": ("gate", "generate", "accept", "candidates"),  # the graph from the gate on
    "evidence": ("gate",),
    "clarify": ("clarify",),
    "relation": ("relation",),
}
READS = {decision: settings_of(Context, *stages) for decision, stages in DECISION_STAGES.items()}


def fingerprint(context: Context, decision: str | None = None) -> str:
    """A short hash of the settings ``decision`` reads (all plain Context settings when None)."""
    names = READS[decision] if decision else tuple(f.name for f in fields(context))
    plain = {}
    for name in names:
        value = getattr(context, name, None)
        plain[name] = value if isinstance(value, str | int | float | bool | type(None)) else repr(value)
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()[:10]


def grounded_state(item: dict[str, Any]) -> dict[str, Any]:
    """The state the gate and the generator see: the raw last turn and the whole conversation."""
    return {
        "question": item["question"],
        "history": item["history"],
        "selected_history": item["history"],
        "kept_passages": item.get("passages") or [],
        "retries": 0,
        # passages our retrieval found (full RAG) rather than passages given with the turn
        "retrieve": item.get("kind") == "unanswerable_retrieved",
    }


@functools.cache
def _graph(start: str, stop_after: str | None = None):
    """The answering graph entered at ``start`` (and ended after ``stop_after``): the real nodes and routes."""
    return build_graph(start=start, stop_after=stop_after, name=f"decisions-from-{start}", output="state")


def _run(
    state: dict[str, Any], context: Context, start: str, stop_after: str | None = None
) -> dict[str, Any]:
    final = _graph(start, stop_after).invoke(state, context=context)
    if final.get("error"):  # a failed model call is not a result: nothing is cached, the run stops
        raise RuntimeError(f"{final['error']['node']}: {final['error']['message']}")
    return final


def _seconds(state: dict[str, Any], nodes: Callable[[str], bool]) -> float:
    return sum(float(e["seconds"]) for e in state.get("node_seconds", []) if nodes(e["node"]))


def answer_outcome(state: dict[str, Any], context: Context) -> dict[str, Any]:
    """What the generate -> accept part of a run ended in: the answer or the decline, and its facts."""
    reason = state.get("abstain_reason")
    grounding = state.get("grounding") or {}
    passages = [p.get("text", "") for p in state.get("kept_passages") or []]
    said = format_conversation([*state["history"], {"speaker": "user", "text": state["question"]}])
    before = grounding.get("answer_before") or state.get("answer")
    return {
        "answer": state.get("answer") if not reason else context.idk_answer,
        "answer_before_grounding": grounding.get("answer_before"),
        "abstain_reason": reason,
        "declined": reason == AbstainReason.VERDICT,
        "declined_why": (state.get("verdict") or {}).get("why") if reason == AbstainReason.VERDICT else None,
        "retries": state.get("retries", 0),
        "decline_retried": bool(state.get("decline_retried")),
        "sentences_dropped": grounding.get("dropped", 0),
        "unsupported_facts": [] if reason else unsupported_facts(state.get("answer") or "", passages, said),
        "unsupported_facts_before_grounding": unsupported_facts(before, passages, said) if before else [],
    }


GENERATE_MODES = ("after-yes", "always", "never")
GATE = "answerability_gate"


def decide_gate(
    item: dict[str, Any], context: Context, *, generate: str = "after-yes", ask_model: bool = True
) -> dict[str, Any]:
    """The gate's decision (with every feature), then the generator's answer or decline.

    Runs the graph's own nodes and routes from the gate on (``build_graph(start=...)``), so what is
    measured is what the graph does. ``generate``: after a gate "yes" (the graph's route), always (the
    graph ended after the gate, then entered at ``generate`` with the gate's verdict in the state), or
    never (the graph ended after the gate). ``ask_model``: also ask the gate model for its yes-probability when
    the decision rule does not need it (``Context.gate_all_features``).
    """
    if generate not in GENERATE_MODES:
        raise ValueError(f"generate must be one of {GENERATE_MODES}, not '{generate}'")
    context = dataclasses.replace(context, gate_all_features=ask_model)
    state = _run(grounded_state(item), context, GATE, stop_after=None if generate == "after-yes" else GATE)
    evidence = state.get("gate_evidence") or {}
    gate = state.get("gate")
    result: dict[str, Any] = {
        "gate_argmax": evidence.get("gate_argmax"),
        "p_yes": evidence.get("p_yes"),
        "p_decline": evidence.get("p_decline"),
        "raw": evidence.get("raw", ""),
        **({"features": evidence["features"]} if "features" in evidence else {}),
        **({"score": evidence["score"]} if "score" in evidence else {}),
        "gate": gate,
        "fallback": any(f.get("node") == GATE for f in state.get("fallbacks", [])),
        "gate_seconds": _seconds(state, lambda node: node == GATE),
    }
    if generate == "always":
        state = _run({**state, "abstain_reason": None}, context, "generate")
    if (gate == "yes" and generate == "after-yes") or generate == "always":
        result.update(answer_outcome(state, context))
        result["generate_seconds"] = _seconds(state, lambda node: node != GATE)
    else:
        result["declined"] = None
    return result


def decide_evidence(item: dict[str, Any], context: Context) -> dict[str, Any]:
    """The gate's model-free features alone (question-passage similarity, word overlap)."""
    state = grounded_state(item)
    return {"features": evidence_features(question_for_answering(state), state["kept_passages"], context)}


def decide_clarify(item: dict[str, Any], context: Context) -> dict[str, Any]:
    """The decision, and for a clarified turn the question the node would ask."""
    decision, evidence = is_underspecified(item["history"], item["question"], item.get("passages"), context)
    result = {
        "clarify": bool(decision),
        "parsed": decision is not None,
        "evidence": evidence[-1] if evidence else "",
    }
    if decision:
        result["question_asked"] = clarifying_question(item, context, decided_by=signal_of(evidence))
    return result


def decide_relation(item: dict[str, Any], context: Context) -> dict[str, Any]:
    pairs = user_and_agent_pairs(item["history"])
    relation, vote, fallbacks = judge_relation(item["question"], pairs[-1], context, "classify_relation")
    return {"relation_class": int(relation), "vote": vote, "fallbacks": len(fallbacks)}


DECISIONS: dict[str, Decide] = {
    "gate": decide_gate,
    "evidence": decide_evidence,
    "clarify": decide_clarify,
    "relation": decide_relation,
}


def run_decision(
    name: str,
    items: Sequence[dict[str, Any]],
    context: Context,
    results_path: str | Path,
    *,
    decide: Decide | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Each item's result (from the cache when already there), in item order."""
    decide = decide or DECISIONS[name]
    writer, done = open_resumable(results_path, key=lambda record: record.get("item_id"))
    results = []
    with writer:
        for number, item in enumerate(items, start=1):
            if item["item_id"] in done:
                results.append(done[item["item_id"]])
                continue
            started = time.perf_counter()
            outcome = decide(item, context)
            record = {
                **{k: item[k] for k in ITEM_FIELDS if k in item},
                **outcome,
                "seconds": round(time.perf_counter() - started, 3),
            }
            writer.write(record)
            results.append(record)
            if progress:
                progress(f"{name} {number}/{len(items)} {item['item_id']} {record['seconds']:.1f}s")
    return results
