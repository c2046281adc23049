"""Stream answers the way a person sees them: the steps, then only the answer text that stands.

python examples/stream_answer.py                          # the first example conversation, local models
python examples/stream_answer.py TASKS.jsonl --jsonl      # one JSON line per task (what was shown, timings)
python examples/stream_answer.py --fake                   # scripted models: no model file needed
python examples/stream_answer.py TASKS.jsonl --jsonl --index INDEX   # passages retrieved (full RAG)

Each text event is a piece of the final answer that the answer and grounding checks have passed; joined
in order they are the final answer (a "retract" event, rare, withdraws what was shown before the answer
comes whole). With --jsonl each line is {"task_id", "streamed" (the pieces, in order), "answer",
"first_s" (seconds to the first piece), "total_s", "chunks"}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mtrag_graph import Context, build_graph
from mtrag_graph.citations import CitedAnswer
from mtrag_graph.runtime.streaming import iter_events
from mtrag_graph.testing import fake_context

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("tasks", nargs="?", default=str(Path(__file__).parent / "conversations.jsonl"))
parser.add_argument("--jsonl", action="store_true", help="every task, one JSON line each")
parser.add_argument("--fake", action="store_true", help="scripted models (answer with the first passage)")
parser.add_argument("--index", help="retrieve each task's passages from this index (full RAG)")
args = parser.parse_args()

tasks = [json.loads(line) for line in Path(args.tasks).read_text().splitlines() if line.strip()]
graph = build_graph(output="state")  # every decision: the kept passages behind the citations
for task in tasks if args.jsonl else tasks[:1]:
    if args.fake:  # a scripted "model" that answers with the first two sentences of the first passage
        passages = task.get("contexts") or [{"text": "No passage."}]
        context = fake_context(generate=[" ".join(passages[0]["text"].split(". ")[:2])], grounding="facts")
    else:
        context = Context(index_dir=args.index) if args.index else Context()
    started, streamed, first, state = time.perf_counter(), [], None, {}
    inputs = {"task": task, "retrieve": True} if args.index else {"task": task}
    for kind, value in iter_events(graph, inputs, context=context):
        if kind == "step" and not args.jsonl:
            print(f"... {value}", file=sys.stderr)
        elif kind == "text":
            first = first if first is not None else time.perf_counter() - started
            streamed.append(value)
            if not args.jsonl:
                print(value, end="", flush=True)
        elif kind == "retract":
            streamed.append("<retract>")
            if not args.jsonl:
                print("\n(withdrawn)")
        elif kind == "done":
            state = value
    if args.jsonl:
        print(json.dumps({"task_id": task.get("task_id"), "streamed": streamed, "answer": state["answer"],
                          "first_s": round(first, 3) if first is not None else None,
                          "total_s": round(time.perf_counter() - started, 3), "chunks": len(streamed)}), flush=True)  # fmt: skip
        continue
    print()
    # which passage backs which sentence
    cited = CitedAnswer.of_reply(state["messages"][-1])  # the reply carries its citations
    print("answer:", cited.text)
    for source in cited.sources:
        print(f"  [{source.number}] {source.title or source.document_id}")
