"""Many tasks at once: the bounded pool, the per-endpoint cap, same answers as one at a time, crash safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mtrag_graph.commands._options import at_least_one
from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.measure.evaluation.judges import Judge
from mtrag_graph.measure.evaluation.runner import Scorers, score_items
from mtrag_graph.models.endpoints import ENDPOINTS, endpoint_limit, endpoint_of
from mtrag_graph.models.factory import get_chat_model, spec_capabilities
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.runtime.batch import answer_tasks, local_models_note
from mtrag_graph.runtime.concurrency import run_bounded
from mtrag_graph.testing import endpoint_context, fake_context, make_task
from mtrag_graph.testing.standin import StandInServer
from tests.conftest import REPO

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close to the hive.",
    "Honey is made from nectar that bees collect from flowers.",
]
TIMING_KEYS = {"seconds", "node_seconds", "model_seconds", "calls"}  # calls: each call's start and seconds


@pytest.fixture
def standin():
    server = StandInServer().start()
    yield server
    server.shutdown()
    server.server_close()


def varied_tasks(n: int, prefix: str = "c") -> list[dict]:
    """First turns and follow-ups with different passages, so routes differ from task to task."""
    turns = [
        "How do bees find flowers?", "They follow the dance of other bees.",
        "What does it mean when they dance in a circle?", "It means food is near.",
        "And how is honey made from it?",
    ]  # fmt: skip
    tasks = []
    for i in range(n):
        depth = 1 + 2 * (i % 3)
        question = f"{turns[depth - 1]} (variant {i})"
        passages = [PASSAGES[(i + k) % len(PASSAGES)] for k in range(1 + i % 3)]
        tasks.append(make_task([*turns[: depth - 1], question], passages, f"{prefix}<::>{i}"))
    return tasks


def write_tasks(path: Path, tasks: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks) + "".join(extra_lines))
    return path


def comparable(record: dict) -> dict:
    if "route" not in record:
        return record
    route = {k: v for k, v in record["route"].items() if k not in TIMING_KEYS}
    return {**record, "route": route}


# ---------------------------------------------------------------- the bounded pool


def test_run_bounded_has_n_items_in_flight_at_once_and_never_more():
    lock, in_flight, peak = threading.Lock(), [0], [0]
    together = threading.Barrier(4, timeout=30)  # breaks (and fails the test) unless 4 run at once

    def work(item: int) -> int:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        together.wait()
        with lock:
            in_flight[0] -= 1
        return item * item

    results = dict(run_bounded(work, range(12), 4))
    assert results == {i: i * i for i in range(12)}
    assert peak[0] == 4


def test_run_bounded_at_one_runs_inline_in_order():
    threads = []
    results = list(run_bounded(lambda i: threads.append(threading.current_thread()) or i, range(5), 1))
    assert results == [(i, i) for i in range(5)]
    assert set(threads) == {threading.main_thread()}


def test_run_bounded_passes_a_failure_to_the_caller_and_starts_nothing_after_it():
    started = []

    def work(item: int) -> int:
        started.append(item)
        if item == 0:
            raise ValueError("bad item 0")
        time.sleep(0.01)
        return item

    with pytest.raises(ValueError, match="bad item 0"):
        for _ in run_bounded(work, range(100), 2):
            pass
    assert len(started) < 100


def test_concurrency_below_one_is_rejected():
    with pytest.raises(ValueError, match="at least 1"):
        list(run_bounded(lambda i: i, [1], 0))
    with pytest.raises(Exception, match="at least 1"):
        at_least_one("0")


# ---------------------------------------------------------------- requests in flight per endpoint


def test_endpoint_cap_holds_and_is_reached(standin):
    model = get_chat_model(f"vllm:stand-in@{standin.base_url}")
    pairs = threading.Barrier(2, timeout=30)  # two requests must be inside together, or this breaks
    inside, peak, lock = [0], [0], threading.Lock()

    def request(_: int) -> None:
        with ENDPOINTS.slot(model):
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            pairs.wait()
            with lock:
                inside[0] -= 1

    with endpoint_limit(2) as endpoints:
        list(run_bounded(request, range(8), 6))
        assert endpoints.peaks()[standin.base_url] == (2, 2, 8)
    assert peak[0] == 2


def test_only_remote_models_have_an_endpoint(standin):
    assert endpoint_of(get_chat_model(f"vllm:m@{standin.base_url}")) == standin.base_url
    assert endpoint_of(ScriptedChatModel(responses=["x"])) is None


def test_the_summary_says_local_models_take_one_call_at_a_time():
    def serialised(spec):
        return spec_capabilities(spec).serialised

    assert serialised("qwen2.5-coder-1.5b") and serialised("gguf:/x/model.gguf")
    assert not serialised("vllm:m@http://127.0.0.1:1/v1") and not serialised("scripted:a")
    note = local_models_note(["qwen-1.5b", "vllm:m@http://h/v1"], 8)
    assert note and "one call at a time per model (qwen-1.5b)" in note
    assert local_models_note(["qwen-1.5b"], 1) is None
    assert local_models_note(["vllm:m@http://h/v1"], 8) is None


# ---------------------------------------------------------------- the runner at concurrency N


def test_concurrency_16_gives_the_same_answers_as_one_at_a_time(tmp_path, standin):
    spec = f"vllm:stand-in@{standin.base_url}"
    context = endpoint_context(spec)
    tasks = write_tasks(tmp_path / "tasks.jsonl", varied_tasks(48), ('{"task_id": "bad<::>1"}\n',))
    one = answer_tasks(tasks, tmp_path / "c1.jsonl", context, progress=False)
    many = answer_tasks(tasks, tmp_path / "c16.jsonl", context, progress=False, concurrency=16)
    c1 = {r["task_id"]: r for r in map(json.loads, (tmp_path / "c1.jsonl").read_text().splitlines())}
    c16 = [json.loads(line) for line in (tmp_path / "c16.jsonl").read_text().splitlines()]
    assert len(c16) == len(c1) == 49 and {r["task_id"] for r in c16} == set(c1)
    for record in c16:
        assert comparable(record) == comparable(c1[record["task_id"]]), record["task_id"]
    routes = {(r["route"]["relation_class"], r["route"]["gate"]) for r in c1.values() if r["status"] == "ok"}
    assert len(routes) > 2, "the endpoint should drive the tasks down different routes"
    assert (one.failed, many.failed) == (1, 1) and many.answered == 48
    assert many.endpoints[standin.base_url][0] == 16  # the cap defaults to one request per task
    assert "concurrency 16: 48 tasks" in many.render()


def test_endpoint_concurrency_caps_requests_at_the_server(tmp_path, standin):
    spec = f"vllm:stand-in@{standin.base_url}"
    context = fake_context(gate_model=spec, generate_model=spec)
    tasks = write_tasks(tmp_path / "tasks.jsonl", varied_tasks(24))
    summary = answer_tasks(
        tasks, tmp_path / "out.jsonl", context, progress=False, concurrency=8, endpoint_concurrency=3
    )
    assert summary.answered == 24
    assert standin.stats()["peak_in_flight"] <= 3
    limit, peak, requests = summary.endpoints[standin.base_url]
    assert limit == 3 and peak <= 3 and requests == standin.stats()["served"]


def test_bad_tasks_are_recorded_as_failed_once_and_the_others_go_on(tmp_path):
    bad = ('{"task_id": "no-input<::>1"}\n', "not json\n", '{"task_id": "wrong<::>1", "input": "text"}\n')
    tasks = write_tasks(tmp_path / "tasks.jsonl", varied_tasks(10), bad)
    summary = answer_tasks(tasks, tmp_path / "out.jsonl", fake_context(), progress=False, concurrency=4)
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    status = {line.get("task_id") or line.get("_line"): line["status"] for line in lines}
    assert len(lines) == len(status) == 13
    assert {k for k, v in status.items() if v == "failed"} == {"no-input<::>1", "line 12", "wrong<::>1"}
    assert (summary.answered, summary.failed) == (10, 3)


# ---------------------------------------------------------------- kill -9 during a concurrent run


def _answer_cmd(tasks: Path, out: Path, spec: str) -> list[str]:
    return [
        sys.executable, "-m", "mtrag_graph", "answer", str(tasks), "-o", str(out), "--no-progress",
        "--concurrency", "8", "--small-model", spec, "--large-model", spec, "--reranker", "lexical",
        "--embedder", "hashing:64",
    ]  # fmt: skip


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_during_a_concurrent_run_then_resume_gives_every_task_exactly_once(tmp_path):
    server = StandInServer(latency_s=0.02).start()
    spec = f"vllm:stand-in@{server.base_url}"
    n = 400
    rows = varied_tasks(n, "k")
    tasks = write_tasks(tmp_path / "tasks.jsonl", rows, ('{"task_id": "broken<::>1", "input": 3}\n',))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    kills = 0
    try:
        # each run is killed once it has written this many more lines, with tasks in flight: the kill
        # moment is set by the output, not by a clock, and every run is killed long before the last task
        for more in (17, 60, 33):
            target = _lines(out) + more
            process = subprocess.Popen(
                _answer_cmd(tasks, out, spec), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            while process.poll() is None and _lines(out) < target:
                time.sleep(0.05)
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                kills += 1
            process.wait()
        final = subprocess.run(
            _answer_cmd(tasks, out, spec), env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        server.shutdown()
        server.server_close()
    assert final.returncode == 1, final.stderr  # 1: the broken task is recorded as failed
    assert kills == 3, "a run ended before its kill: it stopped early (see its stderr by running it alone)"
    raw = out.read_text()
    assert raw.endswith("\n")
    records = [json.loads(line) for line in raw.splitlines()]
    ids = [r["task_id"] for r in records]
    assert sorted(ids) == sorted([r["task_id"] for r in rows] + ["broken<::>1"])
    assert len(ids) == len(set(ids))
    assert [r["task_id"] for r in records if r["status"] == "failed"] == ["broken<::>1"]
    assert "concurrency 8" in final.stderr and "failed: 1" in final.stderr
    print(f"killed {kills} times; {len(ids)} lines for {n + 1} tasks, no duplicates, no torn line")


# ---------------------------------------------------------------- the judges at concurrency N


def test_judging_at_concurrency_4_gives_the_same_rows_in_the_same_order(tmp_path):
    def verdict(messages, options):  # deterministic: a function of the prompt alone
        text = str(messages[-1].content)
        return "declines" if "don't know" in text else "answers"

    items = [
        EvalItem(
            task_id=f"e<::>{i}", line=i, answerability="ANSWERABLE", domain=None, history=[],
            question=f"Question {i}?", passages=PASSAGES, target=f"Bees dance {i}.",
            response="I don't know." if i % 3 == 0 else f"Bees dance {i % 5}.",
        )
        for i in range(24)
    ]  # fmt: skip
    rows = {}
    for concurrency in (1, 4):
        judge = Judge(ScriptedChatModel(responder=verdict))
        scorers = Scorers(metrics=("rouge", "idk"), judge=judge)
        out = tmp_path / f"c{concurrency}"
        rows[concurrency] = score_items(items, scorers, out, progress=False, concurrency=concurrency)
        assert len((out / "scores.jsonl").read_text().splitlines()) == 24

    def strip(row: dict) -> dict:
        return {k: v for k, v in row.items() if k != "seconds"}

    assert [r["task_id"] for r in rows[4]] == [item.task_id for item in items]
    assert [strip(r) for r in rows[4]] == [strip(r) for r in rows[1]]
    assert {r["scores"]["idk"] for r in rows[4]} == {0.0, 1.0}
