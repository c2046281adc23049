"""The graph of langgraph.json on LangGraph servers, driven by ``langgraph-sdk`` as a chat client drives it:
threads, ``messages-tuple`` streams, a clarifying question as an interrupt and its resume, a second turn
on the same thread. Two servers: ``langgraph dev`` (in memory) and Aegra, a self-hosted Agent Protocol
server that keeps threads and checkpoints in PostgreSQL. The models are the OpenAI-compatible stand-in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from mtrag_graph.testing.standin import StandInServer
from tests.conftest import REPO, postgres_server
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES
from tests.servers import free_port, stop, wait_until_up

PASSAGES = [
    {"document_id": "eiffel", "title": "Eiffel Tower",
     "text": "The Eiffel Tower opened to the public on 15 May 1889. It was built for the Exposition Universelle."},
    {"document_id": "liberty", "title": "Statue of Liberty",
     "text": "The Statue of Liberty was dedicated in October 1886. It stands in New York Harbor."},
]  # fmt: skip
ASSISTANT = "mtrag_graph"


def served_config(folder: Path) -> Path:
    """The repository's langgraph.json with its paths made absolute, in ``folder`` (a server resolves
    graph paths against its working directory and keeps its own files there)."""
    config = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [str((REPO / d).resolve()) for d in config["dependencies"]]
    for name, path_spec in config["graphs"].items():
        path, _, variable = path_spec.partition(":")
        config["graphs"][name] = f"{(REPO / path).resolve()}:{variable}"
    config.pop("env", None)
    (folder / "langgraph.json").write_text(json.dumps(config))
    return folder / "langgraph.json"


def langgraph_dev(folder: Path, port: int) -> list[str]:
    cli = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))
    if not Path(cli).exists():
        pytest.skip("langgraph-cli is not installed (pip install 'langgraph-cli[inmem]')")
    return [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(served_config(folder))]  # fmt: skip


def aegra(folder: Path, port: int, env: dict[str, str]) -> list[str]:
    """Aegra (aegra-api, Apache-2.0): the Agent Protocol on FastAPI, threads and checkpoints in PostgreSQL."""
    try:
        import aegra_api  # noqa: F401, PLC0415 - optional (the dev extra): is it installed?
        import psycopg  # noqa: PLC0415 - the postgres extra
    except ImportError as error:
        pytest.skip(f"aegra-api is not installed: {error}")
    url = postgres_server()
    database = f"aegra_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
    env.update(AEGRA_CONFIG=str(served_config(folder)), DATABASE_URL=f"{url.rsplit('/', 1)[0]}/{database}",
               AUTH_TYPE="noop", ENV_MODE="LOCAL")  # fmt: skip
    return [sys.executable, "-m", "uvicorn", "aegra_api.main:app", "--host", "127.0.0.1", "--port", str(port)]


@pytest.fixture(scope="module", params=["langgraph-dev", "aegra-postgres"])
def server(request, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A LangGraph server serving the repository's langgraph.json, its models the stand-in endpoint."""
    folder = tmp_path_factory.mktemp(request.param)
    standin = StandInServer(idle_exit_s=600).start()
    spec = f"vllm:standin@{standin.base_url}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "LANGSMITH_TRACING": "false",
           "MTRAG_SMALL_MODEL": spec, "MTRAG_LARGE_MODEL": spec, "MTRAG_RERANKER": "lexical",
           "MTRAG_EMBEDDER": "hashing:64", "MTRAG_TRACE_FILE": str(folder / "trace.jsonl")}  # fmt: skip
    port, log = free_port(), folder / "server.log"
    command = langgraph_dev(folder, port) if request.param == "langgraph-dev" else aegra(folder, port, env)
    with open(log, "w") as handle:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        problem = wait_until_up(
            f"{url}/info" if request.param == "langgraph-dev" else f"{url}/health", process, log
        )
        assert problem is None, problem
        yield url, folder
    finally:
        stop(process)
        standin.shutdown()
        standin.server_close()


def run(client, thread_id: str, **kwargs) -> tuple[list[dict], list[tuple[str, dict]]]:
    """One streamed run: the AI message chunks of its ``messages-tuple`` stream, and every event."""
    events = [(part.event, part.data) for part in client.runs.stream(
        thread_id, ASSISTANT, stream_mode=["messages-tuple", "updates"], **kwargs)]  # fmt: skip
    assert not [data for event, data in events if event == "error"], events
    chunks = [
        data[0]
        for event, data in events
        if event == "messages" and data[0]["type"] in ("ai", "AIMessageChunk")
    ]
    return chunks, events


def test_a_thread_streams_a_cited_answer_and_answers_the_follow_up_from_the_new_message_only(server):
    url, folder = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    first = {
        "messages": [{"role": "human", "content": "When did the Eiffel Tower open?"}],
        "contexts": PASSAGES,
    }
    chunks, events = run(client, thread, input=first, context={"top_k": 1})
    state = client.threads.get_state(thread)["values"]
    reply = state["messages"][-1]
    assert reply["type"] == "ai" and "1889" in reply["content"]
    assert {c["id"] for c in chunks} == {reply["id"]}  # one message, streamed under its final id
    assert "".join(c["content"] for c in chunks) == reply["content"]  # nothing shown that it does not keep
    metadata = reply["response_metadata"]["mtrag"]
    assert metadata["citations"] and [s["document_id"] for s in metadata["sources"]] == ["eiffel"]  # top_k 1

    second = {"messages": [{"role": "human", "content": "And when was the statue dedicated?"}]}
    chunks, _ = run(client, thread, input=second)
    messages = client.threads.get_state(thread)["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "human", "ai"]
    assert messages[-1]["content"] and "".join(c["content"] for c in chunks) == messages[-1]["content"]
    (assistant,) = client.assistants.search(graph_id=ASSISTANT)
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert "messages" in schemas["input_schema"]["properties"] and schemas["output_schema"]["properties"]
    assert "Failed to get" not in (folder / "server.log").read_text()
    traced = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    assert [t["answer"] for t in traced if t.get("task_id") == f"{thread}<::>1"] == [reply["content"]]


def test_a_clarifying_question_interrupts_the_run_and_the_reply_resumes_it(server):
    url, _ = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    passages = [{"text": t, "title": title} for t, title in zip(LIBRARIES, TITLES, strict=True)]
    ask = {"messages": [{"role": "human", "content": "When does this library open?"}], "contexts": passages}
    chunks, events = run(client, thread, input=ask)
    assert [c["content"] for c in chunks] == [QUESTION_ASKED]  # the question arrives as a message
    (interrupt,) = client.threads.get_state(thread)["interrupts"]
    request = interrupt["value"]
    assert request["action_requests"][0]["args"]["question"] == QUESTION_ASKED
    assert request["review_configs"][0]["action_name"] == request["action_requests"][0]["name"]

    chunks, _ = run(client, thread, command={"resume": "the Alameda one"})
    messages = client.threads.get_state(thread)["values"]["messages"]
    assert [(m["type"], m["content"]) for m in messages[:3]] == [
        ("human", "When does this library open?"), ("ai", QUESTION_ASKED), ("human", "the Alameda one")]  # fmt: skip
    assert messages[3]["type"] == "ai" and "".join(c["content"] for c in chunks) == messages[3]["content"]
    assert not client.threads.get_state(thread)["interrupts"]
