"""Load and faults for the served chat: conversations against two instances sharing one PostgreSQL.

    python -m benchmarks.serve_load --levels 32 128 --kill-levels 32 128 -o /tmp/serve_load.md

Starts, all on 127.0.0.1: the stand-in endpoint (``mtrag_graph.testing.standin``, ``--latency`` seconds a
completion, a fixed request budget, it stops by itself), a PostgreSQL server (``scripts/ci_postgres.sh``,
or ``MTRAG_POSTGRES_URL``) and, for each scenario, two fresh ``mtrag-graph serve`` instances on it
(``--workers`` processes each). N conversations of 3 turns run at once; each opens its thread on one
instance (alternating) and sends its turns with ``after`` (the turns it saw). A turn whose stream breaks
(connection refused or cut) is sent again, with the same ``after``, to the other instance. In a
"kill" scenario the first instance is killed (SIGKILL) when a third of the turns are done.

At the end every thread is read back: a turn lost (fewer user turns than sent) or duplicated (more, or
a question twice) is counted. Reported per scenario: turns/s, first-text and turn latency (p50, p95,
from the first attempt), turns retried, lost, duplicated, and the servers' CPU-seconds per turn (all
their processes, from /proc). Everything stops by itself: the client has a deadline per turn and per
scenario, and the servers are stopped when the scenario ends.

``--preset vllm`` serves the default pipeline on real vLLM servers instead of the stand-in
(``scripts/vllm_start_default.sh`` first), and ``--kill-engine PORT`` makes the kill scenarios kill that vLLM
server (SIGKILL to its process group) instead of an instance, and start it again at once
(``scripts/vllm_start.sh``): the turns in flight wait for it (``MTRAG_ENDPOINT_OUTAGE_S``) and none is lost:

    bash scripts/vllm_start_default.sh
    python -m benchmarks.serve_load --preset vllm --levels 8 --kill-levels 8 --kill-engine 8012 \\
        --turn-deadline 900 --scenario-deadline 1800
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.throughput import cpu_seconds_of, vllm_pidfile

REPO = Path(__file__).resolve().parents[1]
PASSAGES = REPO / "examples" / "passages.jsonl"
QUESTIONS = (
    "How do honey bees tell each other where the flowers are?",
    "How long do the workers live?",
    "When does the Alameda Free Library open on Saturdays?",
)
CALLS_PER_TURN = 12  # at most (rewrites and their retries, verdicts, gate, two answers)
TURN_DEADLINE_S = 120.0
SCENARIO_DEADLINE_S = 900.0
START_S = 90.0


@dataclass
class Turn:
    started: float
    first_text: float | None = None
    ended: float | None = None
    attempts: int = 0
    failures: list[str] = field(default_factory=list)  # why each attempt before the last one failed


@dataclass
class Scenario:
    conversations: int
    kill: bool
    turn_deadline_s: float = TURN_DEADLINE_S
    turns: list[Turn] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0  # the servers' (all their processes)
    client_cpu_s: float = 0.0
    standin_cpu_s: float = 0.0
    load: float = 0.0  # the machine's 1-minute load average at the end
    lost: int = 0
    duplicated: int = 0
    failed: int = 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its child processes (uvicorn's workers)."""
    return cpu_seconds_of(lambda other, fields: other == pid or int(fields[1]) == pid)


class Instance:
    """One ``mtrag-graph serve`` process (and its workers)."""

    def __init__(
        self, postgres: str, endpoint: str, workers: int, threads: int, preset: str | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        spec = f"vllm:stand-in@{endpoint}"
        command = [sys.executable, "-m", "mtrag_graph", "serve", "--passages", str(PASSAGES),
                   "--port", str(self.port), "--checkpointer", postgres, "--no-clarify",
                   "--workers", str(workers), "--threads", str(threads)]  # fmt: skip
        if preset:  # the preset's own models, reranker and embedder
            command += ["--preset", preset]
        else:
            command += ["--small-model", spec, "--large-model", spec, "--reranker", "lexical", "--embedder", "hashing:64"]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=REPO, start_new_session=True)
        self.cpu = 0.0

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"instance on port {self.port} exited")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"instance on port {self.port} did not start")

    def sample_cpu(self) -> None:
        if self.process.poll() is None:
            self.cpu = max(self.cpu, cpu_seconds(self.process.pid))

    def kill(self) -> None:
        self.sample_cpu()
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.sample_cpu()
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


ENGINE_MODELS = {8011: "qwen2.5-coder-0.5b", 8012: "qwen2.5-coder-1.5b"}


class EngineKill:
    """The vLLM server on ``port`` (scripts/vllm_start.sh's): killed with its process group, then started
    again; ``restart_s`` is how long the start took."""

    def __init__(self, port: int) -> None:
        self.port, self.restart_s = port, 0.0

    def kill_and_restart(self) -> None:
        pid = int(vllm_pidfile(self.port).read_text())
        os.killpg(pid, signal.SIGKILL)
        started = time.monotonic()
        env = {**os.environ, "MTRAG_VLLM_PORT": str(self.port), "MTRAG_VLLM_MODEL": ENGINE_MODELS[self.port]}
        done = subprocess.run(
            ["bash", "scripts/vllm_start.sh"], cwd=REPO, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"the vLLM server on {self.port} did not start again: {done.stderr[-2000:]}")
        self.restart_s = time.monotonic() - started


async def send_turn(client: httpx.AsyncClient, urls: list[str], first: int, thread: str, text: str,
                    after: int, turn: Turn, deadline_s: float) -> tuple[int, int]:  # fmt: skip
    """Send one turn until it is answered, the other instance after a failure.

    Returns the thread's turns after it and the instance that answered (the conversation stays there).
    """
    index = first
    while time.perf_counter() - turn.started < deadline_s:
        url = urls[index % len(urls)]
        turn.attempts += 1
        try:
            async with client.stream(
                "POST", f"{url}/api/threads/{thread}/messages", json={"text": text, "after": after}
            ) as response:
                if response.status_code == 409:  # the other instance still holds the turn: wait, send again
                    turn.failures.append("409")
                    await asyncio.sleep(0.5)
                    continue
                response.raise_for_status()
                kind = None
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        if kind == "text" and turn.first_text is None:
                            turn.first_text = time.perf_counter()
                        if kind == "done":
                            turn.ended = time.perf_counter()
                            return int(json.loads(line[6:])["turns"]), index
                        if kind == "error":
                            turn.failures.append("error event")
                            break
                else:
                    turn.failures.append("stream ended without an answer")
        except (httpx.TransportError, httpx.HTTPStatusError) as error:
            turn.failures.append(type(error).__name__)
        index += 1  # the stream broke or never started: the other instance
        await asyncio.sleep(0.2)
    raise TimeoutError(f"thread {thread}: turn not answered in {deadline_s} s")


async def conversation(client: httpx.AsyncClient, urls: list[str], number: int, scenario: Scenario) -> None:
    first = number % len(urls)
    created = await client.post(f"{urls[first]}/api/threads", json={})
    thread = created.json()["thread_id"]
    scenario.threads.append(thread)
    after = 0
    for text in QUESTIONS:
        turn = Turn(started=time.perf_counter())
        scenario.turns.append(turn)
        try:
            after, first = await send_turn(
                client, urls, first, thread, text, after, turn, scenario.turn_deadline_s
            )
        except TimeoutError:
            scenario.failed += 1
            return


async def drive(scenario: Scenario, instances: list[Instance], engine: EngineKill | None = None) -> None:
    urls = [i.url for i in instances]
    limits = httpx.Limits(max_connections=scenario.conversations * 2)
    timeout = httpx.Timeout(scenario.turn_deadline_s, connect=5.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        total = scenario.conversations * len(QUESTIONS)

        async def killer() -> None:
            while sum(t.ended is not None for t in scenario.turns) < total // 3:
                await asyncio.sleep(0.05)
            if engine is not None:
                await asyncio.to_thread(engine.kill_and_restart)
            else:
                instances[0].kill()

        async def sampler() -> None:
            while True:
                for instance in instances:
                    instance.sample_cpu()
                await asyncio.sleep(0.5)

        tasks = [asyncio.create_task(sampler())] + ([asyncio.create_task(killer())] if scenario.kill else [])
        started = time.perf_counter()
        await asyncio.gather(
            *(conversation(client, urls, n, scenario) for n in range(scenario.conversations))
        )
        scenario.wall_s = time.perf_counter() - started
        for task in tasks:
            task.cancel()
        for instance in instances:
            instance.sample_cpu()
        survivor = instances[-1].url
        for thread in scenario.threads:
            turns = (await client.get(f"{survivor}/api/threads/{thread}")).json()["turns"]
            asked = [t["text"] for t in turns if t["speaker"] == "user"]
            answers = sum(t["speaker"] == "agent" for t in turns)
            scenario.lost += max(0, len(QUESTIONS) - len(asked)) + max(0, len(asked) - answers)
            scenario.duplicated += max(0, len(asked) - len(QUESTIONS)) + max(0, answers - len(asked))
            scenario.duplicated += sum(asked.count(q) > 1 for q in QUESTIONS)
            if asked != list(QUESTIONS) or answers != len(QUESTIONS):
                shown = [(t["speaker"], t["text"][:24]) for t in turns]
                print(f"thread {thread}: {shown}", file=sys.stderr, flush=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


def row(scenario: Scenario, workers: int, threads: int) -> str:
    done = [t for t in scenario.turns if t.ended is not None]
    latency = [t.ended - t.started for t in done if t.ended is not None]
    first = [t.first_text - t.started for t in done if t.first_text is not None]
    retried = sum(t.attempts > 1 for t in scenario.turns)
    return (
        f"| {scenario.conversations} | 2 x {workers} x {threads} | {'yes' if scenario.kill else 'no'} | "
        f"{len(done)} | {scenario.wall_s:.1f} | {len(done) / scenario.wall_s:.2f} | "
        f"{percentile(first, 0.5):.2f} | {percentile(first, 0.95):.2f} | "
        f"{percentile(latency, 0.5):.2f} | {percentile(latency, 0.95):.2f} | {retried} | "
        f"{scenario.lost + scenario.failed} | {scenario.duplicated} | {scenario.cpu_s / max(len(done), 1):.3f} | "
        f"{scenario.client_cpu_s / max(len(done), 1):.3f} | {scenario.standin_cpu_s / max(len(done), 1):.3f} | "
        f"{scenario.load:.1f} |"
    )


def failures(scenario: Scenario) -> str:
    reasons: dict[str, int] = {}
    for turn in scenario.turns:
        for reason in turn.failures:
            reasons[reason] = reasons.get(reason, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "none"


HEADER = (
    "| conversations | instances x workers x threads | instance killed | turns answered | wall s | turns/s | "
    "first text p50 s | first text p95 s | turn p50 s | turn p95 s | turns retried | lost | duplicated | "
    "server CPU s per turn | client CPU s per turn | stand-in CPU s per turn | load average |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(1)


def postgres_url() -> str:
    if os.environ.get("MTRAG_POSTGRES_URL"):
        return os.environ["MTRAG_POSTGRES_URL"]
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "ci_postgres.sh")], capture_output=True, text=True
    )
    if started.returncode != 0:
        raise SystemExit(f"no PostgreSQL: {started.stderr.strip()}")
    return started.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="*", default=[32, 128], help="conversations at once")
    parser.add_argument(
        "--kill-levels", type=int, nargs="*", default=[32, 128], help="levels run again with a kill"
    )
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per stand-in completion")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per instance")
    parser.add_argument("--threads", type=int, default=64, help="turns at once per worker process")
    parser.add_argument("-o", "--output", help="append the table here too")
    parser.add_argument("--preset", help="serve this pipeline preset (vllm: real vLLM servers), no stand-in")
    parser.add_argument(
        "--kill-engine", type=int, choices=sorted(ENGINE_MODELS), help="kill scenarios kill this vLLM server"
    )
    parser.add_argument(
        "--turn-deadline", type=float, default=TURN_DEADLINE_S, help="seconds a turn may take"
    )
    parser.add_argument(
        "--scenario-deadline", type=float, default=SCENARIO_DEADLINE_S, help="seconds a scenario may take"
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _exit)  # stop the servers (the finally clauses) when stopped
    scenarios = [Scenario(n, False, args.turn_deadline) for n in args.levels] + [
        Scenario(n, True, args.turn_deadline) for n in args.kill_levels
    ]
    budget = sum(s.conversations for s in scenarios) * len(QUESTIONS) * CALLS_PER_TURN + 200
    postgres = postgres_url()
    standin: subprocess.Popen | None = None
    endpoint = ""
    if not args.preset:
        standin = subprocess.Popen(
            [sys.executable, "-m", "mtrag_graph.testing.standin", "--latency", str(args.latency),
             "--max-requests", str(budget), "--idle-exit", "120"],
            cwd=REPO, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert standin.stdout is not None
        endpoint = standin.stdout.readline().strip()
    rows: list[str] = []
    notes: list[str] = []
    try:
        for scenario in scenarios:
            instances = [
                Instance(postgres, endpoint, args.workers, args.threads, args.preset) for _ in range(2)
            ]
            engine = EngineKill(args.kill_engine) if scenario.kill and args.kill_engine else None
            try:
                for instance in instances:
                    instance.wait_ready()
                base = {id(i): cpu_seconds(i.process.pid) for i in instances}
                client = time.process_time()
                standin_cpu = cpu_seconds(standin.pid) if standin else 0.0
                asyncio.run(asyncio.wait_for(drive(scenario, instances, engine), args.scenario_deadline))
                scenario.cpu_s = sum(i.cpu - base[id(i)] for i in instances)
                scenario.client_cpu_s = time.process_time() - client
                scenario.standin_cpu_s = (cpu_seconds(standin.pid) - standin_cpu) if standin else 0.0
                scenario.load = os.getloadavg()[0]
            finally:
                for instance in instances:
                    instance.stop()
            rows.append(row(scenario, args.workers, args.threads))
            restarted = (
                f" (vLLM on {engine.port} killed, started again in {engine.restart_s:.0f} s)"
                if engine
                else ""
            )
            notes.append(
                f"{scenario.conversations}{' killed' if scenario.kill else ''}{restarted}: {failures(scenario)}"
            )
            print(rows[-1], f"(failed attempts: {notes[-1]})", flush=True)
    finally:
        if standin is not None:
            standin.terminate()
            standin.wait(timeout=10)
    command = "python -m benchmarks.serve_load " + " ".join(argv if argv is not None else sys.argv[1:])
    table = (
        f"Command: `{command}`\n\n{HEADER}\n"
        + "\n".join(rows)
        + "\n\nFailed attempts: "
        + "; ".join(notes)
        + "\n"
    )
    print("\n" + table)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
