"""Do the graph's decisions agree between llama.cpp and a serving engine running the same model?

    bash scripts/vllm_start.sh
    flock /tmp/mtrag-cpu.lock python -m benchmarks.engine_agreement \\
        /work/shared/data/mtrag/tasks/mtragun_dev.jsonl --limit 24 \\
        --endpoint http://127.0.0.1:8011/v1 --model qwen2.5-coder-0.5b --local qwen2.5-coder-0.5b

The same tasks (``--limit`` of them, spread over the file) are answered twice with the same settings
but the models: every model role the engine as a ``vllm:`` spec, then every role the bundled GGUF
through llama.cpp in this process (``--local``), one task at a time. With ``--keep`` the runs resume,
and ``--compare-only`` compares the tasks both runs have answered so far. Both runs rerank by word overlap and compute the gate's
evidence from hashed words (``testing.endpoint_context``), so no other model differs. Per task it compares
the decisions a run records: whether it asked back, the relation class of the question, the gate's
verdict, and the outcome (answered, or the abstention's reason); and whether the answer text is the
same. The weights are the same (the engine's are the GGUF's, dequantised to bf16); the arithmetic is
not (llama.cpp's Q4_K kernels against bf16 matmuls), so greedy decoding can part where two tokens are
close.

``--preset vllm`` compares whole pipelines as they ship instead: the default on its two vLLM servers
(``scripts/vllm_start_default.sh``) against the default in process (``--local-preset``, ``ncl``), with
their own rerankers, gate and models:

    bash scripts/vllm_start_default.sh
    python -m benchmarks.engine_agreement TASKS --limit 16 --preset vllm --keep runs/agree-default
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

DECISIONS = ("asked_back", "relation_class", "gate", "outcome")


def decisions(record: dict[str, Any]) -> dict[str, Any]:
    route = record.get("route") or {}
    asked = bool((route.get("clarification") or {}).get("asked"))
    return {
        "asked_back": asked,
        "relation_class": route.get("relation_class"),
        "gate": route.get("gate"),
        "outcome": "asked back" if asked else route.get("abstain_reason") or "answered",
    }


def compare(local: dict[str, dict], engine: dict[str, dict]) -> dict[str, Any]:
    shared = sorted(set(local) & set(engine))
    per = {d: sum(decisions(local[k])[d] == decisions(engine[k])[d] for k in shared) for d in DECISIONS}
    every = sum(decisions(local[k]) == decisions(engine[k]) for k in shared)
    same_text = sum(local[k]["predictions"][0]["text"] == engine[k]["predictions"][0]["text"] for k in shared)
    differing = [
        {"task_id": k, "local": decisions(local[k]), "engine": decisions(engine[k])}
        for k in shared
        if decisions(local[k]) != decisions(engine[k])
    ]
    return {
        "tasks": len(shared),
        "per_decision": per,
        "all": every,
        "same_text": same_text,
        "differ": differing,
    }


def render(result: dict[str, Any], args: argparse.Namespace) -> str:
    n = result["tasks"]
    lines = [
        f"# python -m benchmarks.engine_agreement {args.tasks} --limit {args.limit} "
        + (
            f"--preset {args.preset} --local-preset {args.local_preset}"
            if args.preset
            else f"--endpoint {args.endpoint} --model {args.model} --local {args.local}"
        ),
        "",
        "| decision | tasks agreeing |",
        "|---|---|",
        *(
            f"| {d} | {result['per_decision'][d]}/{n} ({result['per_decision'][d] / n:.0%}) |"
            for d in DECISIONS
        ),
        f"| **all four** | **{result['all']}/{n} ({result['all'] / n:.0%})** |",
        f"| answer text identical | {result['same_text']}/{n} ({result['same_text'] / n:.0%}) |",
    ]
    for row in result["differ"]:
        lines.append(f"\n- {row['task_id']}: llama.cpp {row['local']}, engine {row['engine']}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", help="MTRAG tasks JSONL (with contexts)")
    parser.add_argument("--limit", type=int, default=24, help="tasks, spread over the file (default 24)")
    parser.add_argument("--endpoint", help="the engine's base URL")
    parser.add_argument("--model", help="the model name the engine serves")
    parser.add_argument("--preset", help="a pipeline preset on the engine (vllm), in place of --endpoint")
    parser.add_argument("--local-preset", default="ncl", help="with --preset: the pipeline in process")
    parser.add_argument("--local", default="qwen2.5-coder-0.5b", help="the same model for llama.cpp")
    parser.add_argument("--concurrency", type=int, default=8, help="tasks in flight against the engine")
    parser.add_argument(
        "--keep", help="keep both runs' predictions in this folder (a run again resumes them)"
    )
    parser.add_argument(
        "--compare-only", action="store_true", help="compare what --keep holds, answering nothing"
    )
    parser.add_argument("-o", "--output", help="append the table to this markdown file")
    args = parser.parse_args()
    if not args.preset and not (args.endpoint and args.model):
        parser.error("give --endpoint and --model, or --preset")

    from benchmarks.throughput import tasks_for
    from mtrag_graph.context import Context
    from mtrag_graph.runtime.batch import answer_tasks
    from mtrag_graph.testing import endpoint_context

    rows = [line for line in Path(args.tasks).read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="agreement-") as scratch:
        work = Path(args.keep or scratch)
        work.mkdir(parents=True, exist_ok=True)
        tasks = work / "tasks.jsonl"
        tasks.write_text("\n".join(tasks_for(args.limit, rows)) + "\n", encoding="utf-8")
        # the engine first (a minute); llama.cpp takes a minute or more per task on a busy 2-core machine,
        # and its run resumes (--keep): what both runs answered is compared
        if args.preset:
            runs = {
                "engine": (Context.from_preset(args.preset), args.concurrency),
                "local": (Context.from_preset(args.local_preset), 1),
            }
        else:
            runs = {
                "engine": (endpoint_context(f"vllm:{args.model}@{args.endpoint}"), args.concurrency),
                "local": (endpoint_context(args.local), 1),
            }
        answered: dict[str, dict[str, dict]] = {}
        for name, (context, concurrency) in runs.items():
            out = work / f"{name}.jsonl"
            if not args.compare_only:
                summary = answer_tasks(tasks, out, context, progress=False, concurrency=concurrency)
                print(f"{name}: {summary.answered} answered now, {summary.failed} failed", file=sys.stderr)
            records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            answered[name] = {r["task_id"]: r for r in records if r.get("status") == "ok"}
        table = render(compare(answered["local"], answered["engine"]), args)
    print(table)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
