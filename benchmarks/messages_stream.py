"""What a LangGraph chat client is shown: the ``messages`` stream of the graph, against its final reply.

    python -m benchmarks.messages_stream /work/shared/data/mtrag/tasks/mtragun_dev.jsonl \\
        --answerability UNANSWERABLE --limit 10 --index ../idx-mini   # the default models, full RAG

Each task runs through the default graph (``build_graph()``) with ``stream_mode=["messages", "values"]``,
as ``langgraph dev`` streams ``messages-tuple`` to Agent Chat UI. Per task: the reply's kind, how many
chunks the stream showed, how many message ids they came under, whether every chunk is part of the
final reply and whether the chunks joined are the final reply, the nodes that sent them, and the
seconds to the first chunk and to the end. ``--standin`` answers with the stand-in endpoint instead of
the local models (no model time; its replies are the passages' first sentences).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessageChunk

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.tasks import answerability_of, domain_of
from mtrag_graph.testing import endpoint_context
from mtrag_graph.testing.standin import StandInServer


def stream_one(graph: Any, task: dict[str, Any], context: Context, retrieve: bool = False) -> dict[str, Any]:
    started, first, chunks, nodes, state = time.perf_counter(), None, [], set(), {}
    inputs = {"task": task, "retrieve": retrieve}
    for mode, item in graph.stream(inputs, context=context, stream_mode=["messages", "values"]):
        if mode == "values":
            state = item
            continue
        message, metadata = item
        if isinstance(message, AIMessageChunk) and message.content:
            first = first if first is not None else time.perf_counter() - started
            chunks.append(message)
            nodes.add(metadata["langgraph_node"])
    reply = state["messages"][-1]
    joined = "".join(str(c.content) for c in chunks)
    return {
        "task_id": task["task_id"],
        "kind": reply.response_metadata["mtrag"]["kind"],
        "chunks": len(chunks),
        "ids": len({c.id for c in chunks}),
        "same_id": {c.id for c in chunks} == {reply.id},
        "all_kept": all(str(c.content) in reply.content for c in chunks),
        "joined_is_reply": joined == reply.content,
        "nodes": ",".join(sorted(nodes)),
        "first_chunk_s": round(first, 2) if first is not None else None,
        "total_s": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks")
    parser.add_argument("--answerability", help="only tasks with this label (e.g. UNANSWERABLE)")
    parser.add_argument("--domains", help="only tasks of these domains, comma-separated (e.g. clapnq,cloud)")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--standin", action="store_true", help="the stand-in endpoint as every model")
    parser.add_argument("--index", help="retrieve every task's passages from this index (full RAG)")
    parser.add_argument("--jsonl", help="also write the rows here")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in Path(args.tasks).read_text(encoding="utf-8").splitlines() if line]
    tasks = [t for t in rows if not args.answerability or answerability_of(t) == args.answerability]
    if args.domains:
        domains = set(args.domains.split(","))
        tasks = [t for t in tasks if domain_of(t.get("Collection") or t.get("collection")) in domains]
    tasks = tasks[: args.limit]
    server = StandInServer().start() if args.standin else None
    settings = {"index_dir": args.index} if args.index else {}
    context = (
        endpoint_context(f"vllm:standin@{server.base_url}", **settings) if server else Context(**settings)
    )
    graph = build_graph()
    results = [stream_one(graph, task, context, retrieve=bool(args.index)) for task in tasks]
    if server:
        server.shutdown()
    columns = list(results[0]) if results else []
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in results:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    held = sum(r["all_kept"] and r["joined_is_reply"] and r["same_id"] for r in results)
    print(
        f"\n{held} of {len(results)}: every chunk in the final reply, joined the reply, one id (the reply's)"
    )
    if args.jsonl:
        Path(args.jsonl).write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    return 0 if held == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
