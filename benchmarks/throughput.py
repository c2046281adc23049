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

``--endpoint URL --model NAME`` runs against a real OpenAI-compatible engine instead of the stand-in
(a vLLM server: ``scripts/vllm_start.sh``), as a ``vllm:NAME@URL`` spec. Every level answers the same
tasks (``--min-tasks`` of them when ``--waves`` times the level is smaller), so the table also says how
many answers equal those at concurrency 1, and the engine's own view, read from its ``/metrics`` every
0.2 s: the most requests it ran at once and kept waiting, and its prefix-cache hit rate. Each level
starts with an empty prefix cache (``POST /reset_prefix_cache``: start the server with
``MTRAG_VLLM_DEV_MODE=1``), else a level would reuse the prompts the level before computed.

    MTRAG_VLLM_DEV_MODE=1 bash scripts/vllm_start.sh
    flock /tmp/mtrag-cpu.lock python -m benchmarks.throughput /work/shared/data/mtrag/tasks/mtragun_dev.jsonl \\
        --endpoint http://127.0.0.1:8011/v1 --model qwen2.5-coder-0.5b --levels 1 4 8 16 --min-tasks 24 --waves 1

``--preset P`` runs a pipeline preset as it ships instead (its models, its reranker and embedder): ``vllm``
is the default pipeline with its two models on two vLLM servers (``scripts/vllm_start_default.sh``; every
vLLM server the preset names is read and reset as above, each reported as small / large), ``ncl`` the
default in process on llama.cpp, for the figure to hold the engine against:

    MTRAG_VLLM_DEV_MODE=1 bash scripts/vllm_start_default.sh
    python -m benchmarks.throughput TASKS --preset vllm --levels 1 4 8 16 --min-tasks 16 --waves 1
    bash scripts/vllm_stop.sh all
    python -m benchmarks.throughput TASKS --preset ncl --levels 1 2 4 --min-tasks 16 --waves 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


class EngineSampler(threading.Thread):
    """A vLLM server's own view, from its Prometheus ``/metrics``: the most requests it ran at once and
    kept waiting, and its prefix-cache counters (queries and hits, in tokens) over the run."""

    GAUGES = ("num_requests_running", "num_requests_waiting")
    COUNTERS = ("prefix_cache_queries_total", "prefix_cache_hits_total")

    def __init__(self, base_url: str, every_s: float = 0.2):
        super().__init__(daemon=True)
        self.url = base_url.rstrip("/").removesuffix("/v1") + "/metrics"
        self.every_s, self._done = every_s, threading.Event()
        self.peaks = dict.fromkeys(self.GAUGES, 0.0)
        self.start_counts = self.read()

    def read(self) -> dict[str, float]:
        with urllib.request.urlopen(self.url, timeout=5) as response:
            text = response.read().decode()
        values: dict[str, float] = {}
        for name in (*self.GAUGES, *self.COUNTERS):
            found = re.findall(rf"^vllm:{name}{{[^}}]*}} ([0-9.e+]+)$", text, re.MULTILINE)
            values[name] = sum(float(v) for v in found)
        return values

    def run(self) -> None:
        while not self._done.wait(self.every_s):
            values = self.read()
            for name in self.GAUGES:
                self.peaks[name] = max(self.peaks[name], values[name])

    def stop(self) -> dict[str, float]:
        self._done.set()
        self.join()
        end = self.read()
        queries = end["prefix_cache_queries_total"] - self.start_counts["prefix_cache_queries_total"]
        hits = end["prefix_cache_hits_total"] - self.start_counts["prefix_cache_hits_total"]
        return {
            "engine_peak_running": self.peaks["num_requests_running"],
            "engine_peak_waiting": self.peaks["num_requests_waiting"],
            "prefix_cache_hit_rate": hits / queries if queries else 0.0,
        }


def cpu_seconds_of(chosen: Callable[[int, list[str]], bool]) -> float:
    """User + system CPU seconds of the processes ``chosen(pid, fields)`` picks, ``fields`` being their
    ``/proc/PID/stat`` after the command name (``fields[1]``: the parent, ``fields[2]``: the group)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if chosen(int(entry.name), fields):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def vllm_pidfile(port: int | str) -> Path:
    """Where ``scripts/vllm_start.sh`` writes the process group of its server on ``port`` (its default)."""
    return Path(f"/tmp/mtrag-vllm-{port}.pid")


def group_cpu_seconds(url: str) -> float | None:
    """CPU seconds (user + system) of the vLLM server on ``url``'s port so far: every process of the group
    ``scripts/vllm_start.sh`` started (``vllm_pidfile``); None without the file."""
    port = url.rstrip("/").removesuffix("/v1").rpartition(":")[2]
    try:
        group = int(vllm_pidfile(port).read_text())
    except (OSError, ValueError):
        return None
    return cpu_seconds_of(lambda pid, fields: int(fields[2]) == group)


def reset_prefix_cache(base_url: str) -> None:
    """Empty a vLLM server's prefix cache (its development routes: ``VLLM_SERVER_DEV_MODE=1``)."""
    url = base_url.rstrip("/").removesuffix("/v1") + "/reset_prefix_cache"
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30).close()
    except OSError as error:
        raise SystemExit(
            f"{url}: {error}; start the server with MTRAG_VLLM_DEV_MODE=1, so that each level starts "
            "with an empty prefix cache"
        ) from None


def preset_engines(preset: str) -> list[str]:
    """The base URLs of the vLLM servers a pipeline preset's models call, the rewrite model's first."""
    from mtrag_graph.context import Context
    from mtrag_graph.stages import model_settings

    context = Context.from_preset(preset)
    urls = []
    for name in ("rewrite_model", *model_settings(Context)):
        spec = getattr(context, name)
        if isinstance(spec, str) and spec.startswith("vllm:") and "@" in spec:
            url = spec.rpartition("@")[2]
            if url not in urls:
                urls.append(url)
    return urls


def child(args: argparse.Namespace) -> None:
    """One level: warm up, then answer the tasks at the given concurrency; print a JSON line."""
    from mtrag_graph.context import Context
    from mtrag_graph.graph import build_graph
    from mtrag_graph.models import embeddings
    from mtrag_graph.runtime.batch import answer_tasks
    from mtrag_graph.testing import endpoint_context

    engines: list[str] = []
    if args.preset:  # a pipeline as it ships: its models, reranker and embedder
        context = Context.from_preset(args.preset, **({"reranker": args.reranker} if args.reranker else {}))
        engines = preset_engines(args.preset)
    elif args.model:  # a real engine: every model role calls it (clarify's too), no model loads here
        context = endpoint_context(f"vllm:{args.model}@{args.url}", reranker=args.reranker or "lexical")
        engines = [args.url]
    else:
        spec = f"vllm:stand-in@{args.url}"
        context = Context(
            rewrite_model=spec,
            classify_model=spec,
            gate_model=spec,
            generate_model=spec,
            reranker=args.reranker or "lexical",
        )
    graph = build_graph(output="state")
    work = Path(args.work)
    for url in engines:
        reset_prefix_cache(url)
    answer_tasks(
        work / "warmup.jsonl", work / f"warm-{args.concurrency}.jsonl", context, progress=False, graph=graph
    )
    baseline = rss_mb()
    sampler = PeakSampler()
    sampler.start()
    samplers = [EngineSampler(url) for url in engines]
    for engine in samplers:
        engine.start()
    cpu_started = os.times()
    engine_cpu_started = [group_cpu_seconds(url) for url in engines]
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
    cpu_ended = os.times()
    engine_cpu = [
        (end - begin) / wall if end is not None and begin is not None else None
        for begin, end in zip(engine_cpu_started, [group_cpu_seconds(url) for url in engines], strict=True)
    ]
    peak = sampler.stop()
    views = [engine.stop() for engine in samplers]
    engine_view = {key: [view[key] for view in views] for key in views[0]} if views else {}
    records = [json.loads(line) for line in (work / f"out-{args.concurrency}.jsonl").read_text().splitlines()]
    calls = sum(r["route"]["model_calls"] for r in records if r.get("status") == "ok")
    endpoints = list(summary.endpoints.values())
    in_flight = max((e[1] for e in endpoints), default=0)
    requests = sum(e[2] for e in endpoints)
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
        # CPU seconds of this process (the client: graph, reranker, in-process models) per wall second
        "client_cpu": (cpu_ended.user + cpu_ended.system - cpu_started.user - cpu_started.system) / wall,
        "engine_cpu": engine_cpu or None,  # each engine's CPU seconds per wall second (its process group)
        "answers": {r["task_id"]: r["predictions"][0]["text"] for r in records if r.get("status") == "ok"},
        **engine_view,
    }
    if context.reranker == "embedding":
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


def _per_engine(value: Any, form: str) -> str:
    """An engine column: one value, or one per engine (small / large), or '-' without an engine."""
    values = value if isinstance(value, list) else [value]
    if not values or value is None:
        return "-"
    return " / ".join("-" if v is None else format(v, form) for v in values)


def render_engine(results: list[dict], args: argparse.Namespace, cpu: str) -> str:
    """The real engine's table: throughput, the client's and the engine's view, and the answers."""
    base = results[0] if results and results[0]["concurrency"] == 1 else None
    source = f"--preset {args.preset}" if args.preset else f"--endpoint {args.endpoint} --model {args.model}"
    what = (
        f"Pipeline preset {args.preset} as it ships (its models; engines: {', '.join(preset_engines(args.preset)) or 'none, in process'})"
        if args.preset
        else f"Real engine: {args.model} at {args.endpoint}"
    )
    lines = [
        f"# python -m benchmarks.throughput {args.tasks} {source} "
        f"--levels {' '.join(map(str, args.levels))} --min-tasks {args.min_tasks} --waves {args.waves}"
        + (f" --reranker {args.reranker}" if args.reranker else ""),
        "",
        f"{what}. Machine: {cpu}.",
        "",
        "| concurrency | tasks | failed | wall s | tasks/s | speed-up vs c1 | requests/s | client peak in flight "
        "| engine peak running | engine peak waiting | prefix-cache hits | s/task mean | client CPU s per s "
        "| engine CPU s per s | answers as at c1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        speedup = f"{r['tasks_per_s'] / base['tasks_per_s']:.1f}x" if base else "-"
        same = "-"
        if base:
            shared = set(base["answers"]) & set(r["answers"])
            same = f"{sum(base['answers'][k] == r['answers'][k] for k in shared)}/{len(shared)}"
        lines.append(
            f"| {r['concurrency']} | {r['tasks']} | {r['failed']} | {r['wall_s']:.1f} | {r['tasks_per_s']:.3f} "
            f"| {speedup} | {r['requests_per_s']:.2f} | {r['peak_in_flight']} "
            f"| {_per_engine(r.get('engine_peak_running'), '.0f')} | {_per_engine(r.get('engine_peak_waiting'), '.0f')} "
            f"| {_per_engine(r.get('prefix_cache_hit_rate'), '.0%')} | {r['seconds_per_task']:.1f} "
            f"| {r.get('client_cpu', 0):.2f} | {_per_engine(r.get('engine_cpu'), '.2f')} | {same} |"
        )
    return "\n".join(lines) + "\n"


def render(results: list[dict], args: argparse.Namespace, cpu: str) -> str:
    base = results[0]["tasks_per_s"] if results and results[0]["concurrency"] == 1 else None
    base_extra = results[0]["peak_mb"] - results[0]["baseline_mb"] if base else None
    lines = [
        f"# python -m benchmarks.throughput {args.tasks} --levels {' '.join(map(str, args.levels))} "
        f"--latency {args.latency} --min-tasks {args.min_tasks} --waves {args.waves} --reranker {args.reranker or 'lexical'}"
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
    parser.add_argument(
        "--reranker",
        choices=("lexical", "embedding", "none"),
        help="the reranker (default: lexical; with --preset, the preset's own)",
    )
    parser.add_argument("--preset", help="a pipeline preset as it ships (vllm: the default on vLLM; ncl)")
    parser.add_argument(
        "--merge-embeddings",
        action="store_true",
        help="merge concurrent embedding requests (MTRAG_EMBED_MERGE=1)",
    )
    parser.add_argument("--endpoint", help="a real engine's base URL (vLLM: http://127.0.0.1:8011/v1)")
    parser.add_argument("--model", help="the model name the engine serves (with --endpoint)")
    parser.add_argument("--keep", help="copy each level's predictions here (out-C.jsonl)")
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
    if bool(args.endpoint) != bool(args.model):
        parser.error("--endpoint and --model go together")
    if args.preset and args.endpoint:
        parser.error("--preset names its own engines: leave out --endpoint and --model")
    rows = [line for line in Path(args.tasks).read_text(encoding="utf-8").splitlines() if line.strip()]
    sizes = {c: max(args.min_tasks, args.waves * c) for c in args.levels}
    budget = sum(n + 1 for n in sizes.values()) * MAX_CALLS_PER_TASK
    if args.preset or args.endpoint:
        standin, url = None, args.endpoint or "-"
    else:
        standin, url = start_standin(args.latency, budget)
    results = []
    try:
        for level in args.levels:
            with tempfile.TemporaryDirectory(prefix="throughput-") as work:
                chosen = tasks_for(sizes[level], rows)
                Path(work, "tasks.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
                Path(work, "warmup.jsonl").write_text(rows[-1] + "\n", encoding="utf-8")
                command = [sys.executable, __file__, "--child", "--url", url, "--work", work,
                           "--concurrency", str(level)]  # fmt: skip
                if args.reranker:
                    command += ["--reranker", args.reranker]
                if args.model:
                    command += ["--model", args.model]
                if args.preset:
                    command += ["--preset", args.preset]
                env = {**os.environ, "MTRAG_EMBED_MERGE": "1" if args.merge_embeddings else "0"}
                out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    return 1
                result = json.loads(out.stdout.strip().splitlines()[-1])
                results.append(result)
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    shutil.copy(Path(work, f"out-{level}.jsonl"), Path(args.keep, f"out-{level}.jsonl"))
                shown = {k: v for k, v in result.items() if k != "answers"}
                print(json.dumps(shown), file=sys.stderr, flush=True)
    finally:
        if standin is not None:
            standin.terminate()
            standin.wait()
    cpu = f"{os.cpu_count()} CPU cores"
    table = (render_engine if args.endpoint or args.preset else render)(results, args, cpu)
    print(table)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
