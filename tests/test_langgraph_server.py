"""The graph of langgraph.json on a LangGraph server (``langgraph dev``), driven by ``langgraph-sdk`` as a
chat client drives it: threads, ``messages-tuple`` streams, a clarifying question as an interrupt and
its resume, a second turn on the same thread. The models are the OpenAI-compatible stand-in endpoint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from mtrag_graph.testing.standin import StandInServer
from tests.conftest import REPO
from tests.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES
from tests.test_serving import free_port, stop, wait_until_up

PASSAGES = [
    {"document_id": "eiffel", "title": "Eiffel Tower",
     "text": "The Eiffel Tower opened to the public on 15 May 1889. It was built for the Exposition Universelle."},
    {"document_id": "liberty", "title": "Statue of Liberty",
     "text": "The Statue of Liberty was dedicated in October 1886. It stands in New York Harbor."},
]  # fmt: skip
ASSISTANT = "mtrag_graph"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """``langgraph dev`` serving the repository's langgraph.json, its models the stand-in endpoint."""
    cli = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))
    if not Path(cli).exists():
        pytest.skip("langgraph-cli is not installed (pip install 'langgraph-cli[inmem]')")
    folder = tmp_path_factory.mktemp("langgraph-dev")
    standin = StandInServer(idle_exit_s=600).start()
    spec = f"vllm:standin@{standin.base_url}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "LANGSMITH_TRACING": "false",
           "MTRAG_SMALL_MODEL": spec, "MTRAG_LARGE_MODEL": spec, "MTRAG_RERANKER": "lexical",
           "MTRAG_EMBEDDER": "hashing:64", "MTRAG_TRACE_FILE": str(folder / "trace.jsonl")}  # fmt: skip
    # the repository's langgraph.json with its paths made absolute, run from a temporary folder: the
    # server keeps its state in ./.langgraph_api and resolves graph paths against the working directory
    config = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [str((REPO / d).resolve()) for d in config["dependencies"]]
    for name, path_spec in config["graphs"].items():
        path, _, variable = path_spec.partition(":")
        config["graphs"][name] = f"{(REPO / path).resolve()}:{variable}"
    config.pop("env", None)
    (folder / "langgraph.json").write_text(json.dumps(config))
    port, log = free_port(), folder / "langgraph-dev.log"
    command = [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
               "--config", str(folder / "langgraph.json")]  # fmt: skip
    with open(log, "w") as handle:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        problem = wait_until_up(f"{url}/ok", process, log)
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
    assert "Failed to get" not in (folder / "langgraph-dev.log").read_text()
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
