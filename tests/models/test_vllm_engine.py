"""A real vLLM engine behind the project's ``vllm:`` spec (docs/serving.md, "vLLM on a CPU").

The engine is vLLM 0.32.0 on this machine's CPU serving the bundled Qwen2.5-Coder 0.5B, set up by
``scripts/vllm_setup.sh`` and started here with ``scripts/vllm_start.sh`` on a free loopback port (about
a minute), once for the module. Without the set-up the tests skip and say so; ``MTRAG_REQUIRE_VLLM=1``
(CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from mtrag_graph.graph import build_graph
from mtrag_graph.models.calls import ask_choice, ask_json
from mtrag_graph.models.factory import get_chat_model
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.nodes.rewrite import LocalRewrite
from mtrag_graph.retrieval.index import build_index
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.testing import endpoint_context, make_task
from tests.conftest import REPO
from tests.models.test_llama_cpp_server import PASSAGES
from tests.nodes.test_clarify import LIBRARIES, TITLES
from tests.retrieval.conftest import write_corpus
from tests.servers import free_port

pytestmark = pytest.mark.slow

MODEL = "qwen2.5-coder-0.5b"
PASSAGE_OBJECTS = [{"document_id": f"d{i}", "text": text} for i, text in enumerate(PASSAGES)]


class Engine:
    """The vLLM server this module started: its spec, and a kill and a restart for the fault test."""

    def __init__(self, port: int, work: Path):
        self.port, self.work = port, work
        self.base = f"http://127.0.0.1:{port}/v1"
        self.spec = f"vllm:{MODEL}@{self.base}"
        self.env = {
            **os.environ,
            "MTRAG_VLLM_PORT": str(port),
            "MTRAG_VLLM_PIDFILE": str(work / "vllm.pid"),
            "MTRAG_VLLM_LOG": str(work / "vllm.log"),
        }
        self.start_seconds: list[float] = []

    def start(self) -> None:
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "scripts/vllm_start.sh"], cwd=REPO, env=self.env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"scripts/vllm_start.sh failed: {done.stdout}{done.stderr}")
        self.start_seconds.append(time.monotonic() - started)

    def kill(self) -> None:
        """SIGKILL to the server's process group: the server and its engine die at once."""
        os.killpg(int((self.work / "vllm.pid").read_text()), signal.SIGKILL)

    def stop(self) -> None:
        subprocess.run(["bash", "scripts/vllm_stop.sh"], cwd=REPO, env=self.env, capture_output=True)


def setup_missing(models: tuple[str, ...] = (MODEL,)) -> str | None:
    """What scripts/vllm_setup.sh has not made yet for ``models``: ``.venv-vllm`` or a converted folder."""
    from mtrag_graph import settings  # noqa: PLC0415 - after the environment is read

    if not (REPO / ".venv-vllm" / "bin" / "python").exists():
        return "no .venv-vllm"
    for model in models:
        folder = settings.graph_cache() / "vllm" / f"{model}-instruct"
        if not (folder / "config.json").exists():
            return f"no converted model in {folder}"
    return None


def skip_or_fail(missing: str | None) -> None:
    """Skip the module's tests when vLLM is not set up (``missing`` says what); a failure under CI's
    ``MTRAG_REQUIRE_VLLM=1``."""
    if missing:
        message = f"vLLM is not set up ({missing}): run scripts/vllm_setup.sh"
        if os.environ.get("MTRAG_REQUIRE_VLLM") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    skip_or_fail(setup_missing())
    server = Engine(free_port(), tmp_path_factory.mktemp("vllm"))
    server.start()
    yield server
    server.stop()


def graph_task_rows() -> list[dict]:
    return [
        make_task(["When did the Eiffel Tower open to the public?"], PASSAGES, "vllm<::>1"),
        make_task(
            ["When did the Eiffel Tower open?", "On 15 May 1889.", "And when was the statue dedicated?"],
            PASSAGES,
            "vllm<::>2",
        ),
        make_task(["When was the Statue of Liberty dedicated?"], PASSAGES, "vllm<::>3"),
        make_task(["What is the tallest mountain in Africa?"], PASSAGES, "vllm<::>4"),
    ]


def write_tasks(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------- the decision calls, as llama.cpp gives them

YES_NO = [
    SystemMessage("Answer the question about the document with yes or no."),
    HumanMessage("Document: The Eiffel Tower opened on 15 May 1889.\nDoes the document say when it opened?"),
]


def test_a_constrained_choice_is_the_bare_word_with_its_probabilities_as_from_llama_cpp(engine):
    vllm, llama = get_chat_model(engine.spec), get_chat_model(MODEL)
    for model in (vllm, llama):
        value, probabilities, raws = score_choice(model, YES_NO, ["yes", "no"])
        assert value == "yes" and raws == ["yes"], raws  # the word itself, first time, no JSON around it
        assert probabilities is not None and abs(sum(probabilities.values()) - 1) < 1e-6
        assert probabilities["yes"] > 0.5
        assert ask_choice(model, YES_NO, ["yes", "no"]) == ("yes", ["yes"])


def test_a_json_schema_reply_validates_from_vllm_as_from_llama_cpp(engine):
    conversation = [
        HumanMessage(
            "Conversation:\nuser: Tell me about the Eiffel Tower.\nassistant: It is in Paris.\n"
            "user: When did it open?\n"
            "Reply with a JSON object: summary, intent, standalone_question."
        )
    ]
    parsed, raws = ask_json(get_chat_model(engine.spec), conversation, LocalRewrite)
    assert parsed is not None, raws
    assert len(raws) == 1 and parsed.standalone_question.strip()


def requests_running(engine: Engine) -> float:
    """vLLM's own count of requests it is generating now (its Prometheus ``/metrics``)."""
    text = httpx.get(engine.base.removesuffix("/v1") + "/metrics", timeout=10).text
    return sum(
        float(line.split()[-1]) for line in text.splitlines() if line.startswith("vllm:num_requests_running")
    )


def test_free_text_streams_from_vllm_and_joins_to_the_whole_reply(engine):
    model = get_chat_model(engine.spec)
    messages = [HumanMessage(content="In two sentences: when did the Eiffel Tower open, and where is it?")]
    whole = model.invoke(messages, max_tokens=48)
    pieces = [c.content for c in model.stream(messages, max_tokens=48) if c.content]
    assert len(pieces) > 5 and "".join(pieces) == whole.content
    # streamed, not sent whole: the first piece reaches the caller while the server is still generating.
    # A reply of 256 tokens (ignore_eos) takes the 0.5B on one thread several seconds; checked by the
    # server's state, not by a clock, so a loaded machine that delivers the pieces in a burst cannot fail it
    stream = model.stream(messages, max_tokens=256, ignore_eos=True)
    first = next(c for c in stream if c.content)
    running = requests_running(engine)
    rest = [c.content for c in stream if c.content]
    assert first.content and running >= 1 and len(rest) > 100


# ---------------------------------------------------------------- the graph against the engine


def test_tasks_with_reference_passages_run_concurrently_within_the_endpoint_cap(engine, tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", graph_task_rows())
    # the gate asks the model (with log-probabilities) instead of the model-free classifier
    context = endpoint_context(engine.spec, gate_classifier=None)
    summary = answer_tasks(
        tasks, tmp_path / "out.jsonl", context, progress=False, concurrency=4, endpoint_concurrency=2
    )
    records = {r["task_id"]: r for r in records_of(tmp_path / "out.jsonl")}
    assert summary.failed == 0 and len(records) == 4
    limit, peak, requests = summary.endpoints[engine.base]  # (other endpoints of the process: earlier tests)
    assert limit == 2 and peak == 2 and requests >= 8  # two requests in flight, never more
    for record in records.values():
        route = record["route"]
        assert route["abstain_reason"] != "error" and not route["model_errors"], route.get("error")
        assert route["completion_tokens"] > 0
    gates = [c for r in records.values() for c in r["route"]["calls"] if c["node"] == "answerability_gate"]
    assert gates, "the gate asked the model"
    first = records["vllm<::>1"]
    assert first["route"]["abstained"] or "1889" in first["predictions"][0]["text"]
    print({k: (r["route"]["gate"], r["predictions"][0]["text"][:80]) for k, r in records.items()})


def test_a_task_without_passages_is_answered_from_retrieved_ones(engine, tmp_path):
    corpus = write_corpus(tmp_path / "cloud.jsonl")
    build_index(corpus, tmp_path / "index", embedder="hashing:256", show_progress=False)
    task = {
        "task_id": "rag<::>1",
        "Collection": "mt-rag-ibmcloud-elser-512-100-20240502",
        "input": [{"speaker": "user", "text": "What kind of database is Cloudant?"}],
    }
    context = endpoint_context(engine.spec, index_dir=str(tmp_path / "index"), top_k=2)
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["abstain_reason"] in (None, "no_evidence", "gate"), state.get("error")
    if state["abstain_reason"] is None:
        assert "json" in state["answer"].lower() or "document" in state["answer"].lower()


def test_a_thread_answers_and_follows_up_on_the_messages_graph(engine):
    context = endpoint_context(engine.spec)
    graph = build_graph(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "vllm-thread"}}
    first = graph.invoke(
        {"messages": [HumanMessage("When did the Eiffel Tower open?")], "contexts": PASSAGE_OBJECTS},
        thread,
        context=context,
    )
    second = graph.invoke({"messages": [HumanMessage("And the statue?")]}, thread, context=context)
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    for out in (first, second):
        reply = out["messages"][-1]
        assert isinstance(reply, AIMessage) and reply.content
        assert reply.response_metadata["mtrag"]["kind"] in ("answer", "abstention")
    assert graph.get_state(thread).values["history"][0]["text"] == "When did the Eiffel Tower open?"


def test_an_unclear_question_gets_a_clarifying_question_and_waits(engine):
    passages = [{"text": t, "title": title} for t, title in zip(LIBRARIES, TITLES, strict=True)]
    context = endpoint_context(engine.spec, clarify=True)
    graph = build_graph(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "vllm-clarify"}}
    out = graph.invoke(
        {"messages": [HumanMessage("When does this library open?")], "contexts": passages},
        thread,
        context=context,
    )
    reply = out["messages"][-1]
    assert reply.response_metadata["mtrag"]["kind"] == "clarifying_question"
    assert "Alameda" in reply.content and "Monterey" in reply.content
    (pending,) = graph.get_state(thread).interrupts
    assert pending.value["clarifying_question"] == reply.content


# ---------------------------------------------------------------- a fault: the server killed mid-run


def test_the_server_killed_mid_run_and_restarted_loses_no_task(engine, tmp_path):
    """Runs last: it kills the module's server (SIGKILL to its process group) once two tasks are
    written, starts it again, and the run that was going on finishes with every task once, none ended
    in an error; running the command again resumes with nothing left to do."""
    rows = [
        make_task([f"When did the Eiffel Tower open? ({i})"], PASSAGES, f"fault<::>{i}") for i in range(8)
    ]
    tasks, out = write_tasks(tmp_path / "tasks.jsonl", rows), tmp_path / "out.jsonl"
    command = [
        sys.executable, "-m", "mtrag_graph", "answer", str(tasks), "-o", str(out), "--no-progress",
        "--concurrency", "2", "--small-model", engine.spec, "--large-model", engine.spec,
        "--reranker", "lexical", "--embedder", "hashing:64",
    ]  # fmt: skip
    log = tmp_path / "answer.log"
    with open(log, "w") as handle:
        run = subprocess.Popen(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 400
    while (not out.exists() or len(out.read_text().splitlines()) < 2) and time.monotonic() < deadline:
        assert run.poll() is None, log.read_text()[-3000:]
        time.sleep(0.5)
    engine.kill()
    killed_after = len(out.read_text().splitlines())
    time.sleep(3)  # the tasks in flight find the server gone
    engine.start()
    assert run.wait(timeout=600) == 0, log.read_text()[-3000:]
    records = records_of(out)
    assert sorted(r["task_id"] for r in records) == sorted(r["task_id"] for r in rows)  # every task once
    assert all(r["status"] == "ok" and r["route"]["abstain_reason"] != "error" for r in records), [
        r["route"].get("error") for r in records
    ]
    assert "stopped answering: waiting" in log.read_text()
    again = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert (
        again.returncode == 0 and "answered now: 0  resumed (already done): 8" in again.stdout + again.stderr
    )
    assert len(records_of(out)) == 8
    print(f"killed after {killed_after} of 8 tasks; restarted in {engine.start_seconds[-1]:.0f} s")
