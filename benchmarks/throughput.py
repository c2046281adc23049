"""Tasks per second at concurrency 1, 4, 16 and 64 against an OpenAI-compatible endpoint with ~300 ms calls.

    python -m benchmarks.throughput /work/shared/data/mtrag/tasks/mtrag_reference.jsonl \\
        -o runs/throughput.md   # the tables for benchmarks/results/throughput.md

The endpoint is ``mtrag_graph.testing.standin`` in its own process (127.0.0.1 only; it serves a fixed budget
of requests, then stops, and stops anyway after a minute idle): every completion sleeps ``--latency``
seconds and replies deterministically, so the graph takes its usual routes (rewrites, relation
verdicts, gate, answer checks) and the time a task waits is the endpoint's, as with a real server.

Each concurrency level runs in a fresh process of its own: it loads the graph, answers one warm-up
task, then answers N tasks (spread over the whole file, the same way for every level) through
``answer_tasks(concurrency=c)``, sampling its resident memory every 10 ms. Reported per level:
tasks/s of wall time, the speed-up over concurrency 1, requests/s, the most requests the client had in
flight at the endpoint, mean seconds per task, and memory: the peak resident set above the warm
process's, per task in flight, and per extra task in flight compared with concurrency 1.

``--reranker embedding`` runs the default MiniLM reranker instead of word overlap, to show what the
CPU-side work of a task does to throughput on this machine (``--merge-embeddings`` merges concurrent
embedding requests, ``MTRAG_EMBED_MERGE=1``, for comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LEVELS = (1, 4, 16, 64)
MAX_CALLS_PER_TASK = 12  # ncl: at most 2 rewrites (+2 JSON retries), 2 verdicts, gate, 2 answers


def tasks_for(n: int, rows: list[str]) -> list[str]:
    """``n`` task lines spread evenly over the file (the same mix of first turns and follow-ups)."""
    step = max(len(rows) // n, 1)
    return rows[::step][:n]


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakSampler(threading.Thread):
    def __init__(self, every_s: float = 0.01):
        super().__init__(daemon=True)
        self.every_s, self.peak, self._done = every_s, rss_mb(), threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.every_s):
            self.peak = max(self.peak, rss_mb())

    def stop(self) -> float:
        self._done.set()
        self.join()
        return max(self.peak, rss_mb())


def child(args: argparse.Namespace) -> None:
    """One level: warm up, then answer the tasks at the given concurrency; print a JSON line."""
    from mtrag_graph.context import Context
    from mtrag_graph.graph import build_graph
    from mtrag_graph.models import embeddings
    from mtrag_graph.runtime.batch import answer_tasks

    spec = f"vllm:stand-in@{args.url}"
    context = Context(
        rewrite_model=spec, classify_model=spec, gate_model=spec, generate_model=spec, reranker=args.reranker
    )
    graph = build_graph(output="state")
    work = Path(args.work)
    answer_tasks(
        work / "warmup.jsonl", work / f"warm-{args.concurrency}.jsonl", context, progress=False, graph=graph
    )
    baseline = rss_mb()
    sampler = PeakSampler()
    sampler.start()
    started = time.perf_counter()
    summary = answer_tasks(
        work / "tasks.jsonl",
        work / f"out-{args.concurrency}.jsonl",
        context,
        progress=False,
        graph=graph,
        concurrency=args.concurrency,
    )
    wall = time.perf_counter() - started
    peak = sampler.stop()
    records = [json.loads(line) for line in (work / f"out-{args.concurrency}.jsonl").read_text().splitlines()]
    calls = sum(r["route"]["model_calls"] for r in records if r.get("status") == "ok")
    (_, in_flight, requests), *_ = summary.endpoints.values()
    result = {
        "concurrency": args.concurrency,
        "tasks": summary.answered,
        "failed": summary.failed,
        "wall_s": wall,
        "tasks_per_s": summary.answered / wall,
        "requests": requests,
        "requests_per_s": requests / wall,
        "model_calls": calls,
        "peak_in_flight": in_flight,
        "seconds_per_task": sum(summary.seconds) / max(len(summary.seconds), 1),
        "baseline_mb": baseline,
        "peak_mb": peak,
        "abstained": sum(summary.abstentions.values()),
    }
    if args.reranker == "embedding":
        merged = getattr(embeddings.get_embedder(context.embedder)._encode, "stats", None)
        if merged is not None:
            result["embed_calls"], result["embed_requests"] = merged.calls, merged.requests
    print(json.dumps(result), flush=True)


def start_standin(latency: float, budget: int) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mtrag_graph.testing.standin", "--latency", str(latency), "--max-requests", str(budget),
         "--idle-exit", "60"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def render(results: list[dict], args: argparse.Namespace, cpu: str) -> str:
    base = results[0]["tasks_per_s"] if results and results[0]["concurrency"] == 1 else None
    base_extra = results[0]["peak_mb"] - results[0]["baseline_mb"] if base else None
    lines = [
        f"# python -m benchmarks.throughput {args.tasks} --levels {' '.join(map(str, args.levels))} "
        f"--latency {args.latency} --min-tasks {args.min_tasks} --waves {args.waves} --reranker {args.reranker}"
        + (" --merge-embeddings" if args.merge_embeddings else ""),
        "",
        f"Stand-in endpoint: {args.latency * 1000:.0f} ms per completion, 127.0.0.1. Machine: {cpu}.",
        "",
        "| concurrency | tasks | wall s | tasks/s | speed-up vs c1 | requests/s | peak requests in flight "
        "| s/task mean | peak RSS above warm MB | MB per task in flight | MB per extra task vs c1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        extra = r["peak_mb"] - r["baseline_mb"]
        speedup = f"{r['tasks_per_s'] / base:.1f}x" if base else "-"
        marginal = (
            f"{(extra - base_extra) / (r['concurrency'] - 1):.2f}"
            if base_extra is not None and r["concurrency"] > 1
            else "-"
        )
        lines.append(
            f"| {r['concurrency']} | {r['tasks']} | {r['wall_s']:.1f} | {r['tasks_per_s']:.2f} | {speedup} "
            f"| {r['requests_per_s']:.1f} | {r['peak_in_flight']} | {r['seconds_per_task']:.2f} "
            f"| {extra:.1f} | {extra / r['concurrency']:.2f} | {marginal} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="?", help="MTRAG tasks JSONL (reference mode: tasks with contexts)")
    parser.add_argument("-o", "--output", help="append the table to this markdown file")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per completion (default 0.3)")
    parser.add_argument("--min-tasks", type=int, default=24, help="tasks at concurrency 1 (default 24)")
    parser.add_argument("--waves", type=int, default=4, help="tasks per level: this many times c (default 4)")
    parser.add_argument("--reranker", default="lexical", choices=("lexical", "embedding"))
    parser.add_argument(
        "--merge-embeddings",
        action="store_true",
        help="merge concurrent embedding requests (MTRAG_EMBED_MERGE=1)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0
    if not args.tasks:
        parser.error("give a tasks file")
    rows = [line for line in Path(args.tasks).read_text(encoding="utf-8").splitlines() if line.strip()]
    sizes = {c: max(args.min_tasks, args.waves * c) for c in args.levels}
    budget = sum(n + 1 for n in sizes.values()) * MAX_CALLS_PER_TASK
    standin, url = start_standin(args.latency, budget)
    results = []
    try:
        for level in args.levels:
            with tempfile.TemporaryDirectory(prefix="throughput-") as work:
                chosen = tasks_for(sizes[level], rows)
                Path(work, "tasks.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
                Path(work, "warmup.jsonl").write_text(rows[-1] + "\n", encoding="utf-8")
                command = [sys.executable, __file__, "--child", "--url", url, "--work", work,
                           "--concurrency", str(level), "--reranker", args.reranker]  # fmt: skip
                env = {**os.environ, "MTRAG_EMBED_MERGE": "1" if args.merge_embeddings else "0"}
                out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    return 1
                result = json.loads(out.stdout.strip().splitlines()[-1])
                results.append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    finally:
        standin.terminate()
        standin.wait()
    cpu = f"{os.cpu_count()} CPU cores"
    table = render(results, args, cpu)
    print(table)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
