"""Tracing: node runs with their decisions as metadata, the trace file, OpenTelemetry spans."""

from __future__ import annotations

import json

from mtrag_graph.commands.trace import render
from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.tracing import TraceFile, instrument_opentelemetry, opentelemetry_provider
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close.",
]
TASK = make_task(["How do bees talk?", "They dance.", "How do they find flowers?"], PASSAGES)
NODE_ORDER = [
    "load_task", "evidence_precheck", "global_rewrite", "classify_relation", "select_history",
    "local_rewrite", "rerank", "answerability_gate", "generate", "accept_answer", "finish",
]  # fmt: skip
GRAPH = build_graph(output="state")


def trace(tmp_path, context, task=TASK) -> dict:
    path = tmp_path / "trace.jsonl"
    GRAPH.invoke({"task": task}, context=context, config={"callbacks": [TraceFile(path)]})
    return json.loads(path.read_text().splitlines()[-1])


def test_each_node_is_a_named_run_in_order_with_its_decisions(tmp_path):
    nodes = trace(tmp_path, fake_context())["children"]
    assert [run["name"] for run in nodes] == NODE_ORDER
    meta = {run["name"]: run["metadata"] for run in nodes}
    assert all(m["task_id"] == "t<::>1" and m["node_seconds"] >= 0 for m in meta.values())
    assert meta["classify_relation"]["relation"] == "CONTINUATION"
    assert meta["answerability_gate"]["gate"] == "yes"
    assert meta["answerability_gate"]["models"] == ["scripted"]
    assert meta["answerability_gate"]["prompt_tokens"] > 0
    assert meta["rerank"]["passages"] == 2 and len(meta["rerank"]["picked"]) == 2
    assert meta["accept_answer"]["answer"] == "The answer is stated in the passage."


def test_retries_are_recorded_on_the_accept_answer_run(tmp_path):
    context = fake_context(
        generate=["They find flowers.", "Bees perform the waggle dance to show direction."]
    )
    checks = [run for run in trace(tmp_path, context)["children"] if run["name"] == "accept_answer"]
    assert [run["metadata"].get("retries") for run in checks] == [1, None]


def test_trace_file_holds_one_run_tree_per_task_and_trace_show_prints_it(tmp_path):
    path = tmp_path / "trace.jsonl"
    for task_id in ("t<::>1", "t<::>2"):
        task = {**TASK, "task_id": task_id}
        GRAPH.invoke({"task": task}, context=fake_context(), config={"callbacks": [TraceFile(path)]})
    trees = [json.loads(line) for line in path.read_text().splitlines()]
    assert [tree["task_id"] for tree in trees] == ["t<::>1", "t<::>2"]
    assert [child["name"] for child in trees[0]["children"]] == NODE_ORDER
    gate = trees[0]["children"][NODE_ORDER.index("answerability_gate")]
    call = gate["children"][0]  # the retry layer's run, holding one llm run per attempt
    assert call["name"] == "answerability_gate.model"
    assert call["children"][0]["run_type"] == "llm" and call["children"][0]["metadata"]["prompt_tokens"] > 0
    lines = render(trees[0])
    assert lines[0] == "task t<::>1"
    assert any(line.strip().startswith("answerability_gate") and "gate=yes" in line for line in lines)
    assert not any("route_after" in line for line in lines)


def test_an_in_memory_opentelemetry_exporter_receives_a_span_per_node():
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: PLC0415 - optional (the otel extra)

    exporter = InMemorySpanExporter()
    provider = opentelemetry_provider(exporter)
    instrumentor = instrument_opentelemetry(provider)
    try:
        GRAPH.invoke({"task": TASK}, context=fake_context())
        provider.force_flush()
    finally:
        instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    root = next(span for span in spans if span.parent is None)
    node_spans = sorted((s for s in spans if s.parent and s.parent.span_id == root.context.span_id),
                        key=lambda s: s.start_time)  # fmt: skip
    assert root.name == "mtrag-graph"
    assert [span.name for span in node_spans] == NODE_ORDER
    gate = node_spans[NODE_ORDER.index("answerability_gate")]
    assert json.loads(gate.attributes["output.value"])["gate"] == "yes"
    assert json.loads(gate.attributes["input.value"])["task_id"] == "t<::>1"
    model_spans = [s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert model_spans and all(s.parent is not None for s in model_spans)


def test_the_trace_holds_the_answer_with_its_citations(tmp_path):
    tree = trace(
        tmp_path, fake_context(generate=["Bees use the waggle dance to show the direction of flowers."])
    )
    assert tree["answer"] == "Bees use the waggle dance to show the direction of flowers."
    assert [c["document_ids"] for c in tree["citations"]] == [["d0"]]
