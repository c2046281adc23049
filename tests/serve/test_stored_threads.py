"""Threads stored before the page and the terminal drove the one graph still open, and go on.

``data/threads-before-48.sqlite`` was written by the release before (commit 7c57566): the served chat
graph's threads "answered" (two cited answers), "waiting" (a clarifying question pending), "idk", and
a terminal ``chat`` thread "terminal". Each is rewritten as the graph's thread the first time it is read
(``runtime.checkpoints.migrate_thread``), or all at once by ``mtrag-graph migrate-threads``, on SQLite
and, its threads copied there, on PostgreSQL.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from mtrag_graph.cli import main
from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.checkpoints import migrate_thread, open_checkpointer, snapshot_question
from tests.conftest import REPO
from tests.serve.client import events, served
from tests.serve.fakes import ANSWERS, write_passages

STORED = Path(__file__).parent / "data" / "threads-before-48.sqlite"


def stored_copy(tmp_path: Path) -> str:
    copy = tmp_path / "chat.sqlite"
    shutil.copy(STORED, copy)
    return str(copy)


def test_a_stored_thread_opens_with_its_turns_and_its_last_answer_cited(tmp_path):
    with served(stored_copy(tmp_path)) as client:
        listed = {t["thread_id"] for t in client.get("/api/threads").json()["threads"]}
        thread = client.get("/api/threads/answered").json()
    assert listed == {"answered", "waiting", "idk"}
    assert [t["speaker"] for t in thread["turns"]] == ["user", "agent", "user", "agent"]
    assert thread["turns"][0]["text"] == "Why do bees dance?" and thread["waiting"] is None
    last = thread["last"]
    assert last["answer"].startswith("To install the tool") and last["idk"] is False
    assert last["parts"][0]["cites"] == [1]
    (source,) = last["sources"]
    assert (source["document_id"], source["title"]) == ("setup", "Setting up")
    assert "pip install mtrag-graph" in source["text"]  # from the passages the thread kept


def test_a_stored_thread_goes_on_with_the_next_message(tmp_path):
    with served(stored_copy(tmp_path)) as client:
        found = events(client, "answered", "When does the Alameda library open?", after=4)
        turns = client.get("/api/threads/answered").json()["turns"]
    assert found[-1][0] == "done" and found[-1][1]["answer"] == ANSWERS["library"]
    assert found[-1][1]["sources"][0]["file"] == "libraries.pdf"
    assert len(turns) == 6


def test_a_stored_clarifying_question_still_waits_and_the_reply_resumes_it(tmp_path):
    with served(stored_copy(tmp_path)) as client:
        waiting = client.get("/api/threads/waiting").json()
        assert waiting["waiting"].startswith("Which library do you mean")
        assert [t["speaker"] for t in waiting["turns"]] == ["user"]
        found = events(client, "waiting", "the Alameda one", after=1)
        saved = client.get("/api/threads/waiting").json()
    assert found[-1][0] == "done" and found[-1][1]["answer"] == ANSWERS["library"]
    assert found[-1][1]["sources"][0]["document_id"] == "alameda"
    assert [t["text"] for t in saved["turns"]][1:3] == [waiting["waiting"], "the Alameda one"]


def test_a_stored_i_dont_know_is_still_marked_as_one(tmp_path):
    with served(stored_copy(tmp_path)) as client:
        last = client.get("/api/threads/idk").json()["last"]
    assert last["idk"] is True and last["abstain_reason"] == "gate_no" and last["sources"] == []


def test_a_thread_is_rewritten_once_and_a_thread_of_the_graph_never(tmp_path):
    with open_checkpointer(stored_copy(tmp_path)) as saver:
        graph = build_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "terminal"}}
        assert migrate_thread(graph, config) is True
        assert migrate_thread(graph, config) is False
        assert migrate_thread(graph, {"configurable": {"thread_id": "unknown"}}) is False
        messages = graph.get_state(config).values["messages"]
    assert [m.type for m in messages] == ["human", "ai"]
    assert messages[-1].response_metadata["mtrag"]["citations"][0]["document_ids"] == ["bees"]


def test_the_terminal_chat_continues_a_stored_thread(tmp_path):
    models = ["--small-model", "scripted:yes", "--large-model", f"scripted:yes|{ANSWERS['bees']}",
              "--reranker", "lexical", "--embedder", "hashing:64", "--no-clarify"]  # fmt: skip
    command = [sys.executable, "-m", "mtrag_graph.cli", "chat", "--passages",
               str(write_passages(tmp_path / "passages.jsonl")), "--thread", "terminal",
               "--checkpointer", stored_copy(tmp_path), *models]  # fmt: skip
    run = subprocess.run(command, cwd=REPO, input="Where do bees dance?\n", capture_output=True, text=True,
                         timeout=180)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "thread terminal: continuing, 2 turns so far" in run.stdout
    assert "you> Why do bees dance?" in run.stdout
    assert run.stdout.count("bot> ") >= 2  # the stored answer, then the new one


def test_the_migrate_threads_command_rewrites_every_stored_thread_once(tmp_path, capsys):
    database = stored_copy(tmp_path)
    assert main(["migrate-threads", database]) == 0
    assert capsys.readouterr().out.strip() == "migrated 4 of 4 threads (0 were the graph's already)"
    assert main(["migrate-threads", database]) == 0
    assert capsys.readouterr().out.strip() == "migrated 0 of 4 threads (4 were the graph's already)"
    with open_checkpointer(database) as saver:
        graph = build_graph(checkpointer=saver)
        terminal = graph.get_state({"configurable": {"thread_id": "terminal"}}).values["messages"]
        waiting = graph.get_state({"configurable": {"thread_id": "waiting"}})
    assert [m.type for m in terminal] == ["human", "ai"]
    assert snapshot_question(waiting).startswith("Which library do you mean")
    with served(database) as client:  # what the page shows is what a first read would have shown
        last = client.get("/api/threads/answered").json()["last"]
    assert last["answer"].startswith("To install the tool") and last["parts"][0]["cites"] == [1]


def test_the_migrate_threads_command_refuses_a_missing_database(tmp_path, capsys):
    assert main(["migrate-threads", str(tmp_path / "none.sqlite")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()


def copy_threads(source: Any, target: Any, prefix: str) -> list[str]:
    """Every checkpoint (and pending write) of ``source``'s threads into ``target``, oldest first, each
    thread renamed ``prefix`` + its id: the old chat graph's threads as a PostgreSQL store would hold them."""
    copied = []
    for old in list(source.list(None))[::-1]:
        configurable = old.config["configurable"]
        thread_id = prefix + str(configurable["thread_id"])
        parent = {"thread_id": thread_id, "checkpoint_ns": configurable.get("checkpoint_ns", "")}
        if old.parent_config:
            parent["checkpoint_id"] = old.parent_config["configurable"]["checkpoint_id"]
        config = target.put({"configurable": parent}, old.checkpoint, old.metadata,
                            old.checkpoint["channel_versions"])  # fmt: skip
        for task_id, channel, value in old.pending_writes or []:
            target.put_writes(config, [(channel, value)], task_id)
        copied.append(thread_id)
    return sorted(set(copied))


def test_the_migrate_threads_command_rewrites_threads_stored_in_postgresql(postgres_url, tmp_path, capsys):
    prefix = f"before-48-{uuid.uuid4().hex[:8]}-"
    with open_checkpointer(stored_copy(tmp_path)) as old, open_checkpointer(postgres_url) as saver:
        copied = copy_threads(old, saver, prefix)
    assert copied == [prefix + t for t in ("answered", "idk", "terminal", "waiting")]
    assert main(["migrate-threads", postgres_url]) == 0
    rewritten = capsys.readouterr().out.split()
    assert int(rewritten[1]) >= 4  # these four (and any other test's leftovers of the old shape)
    assert main(["migrate-threads", postgres_url]) == 0
    assert capsys.readouterr().out.startswith("migrated 0 of ")
    with open_checkpointer(postgres_url) as saver:
        graph = build_graph(checkpointer=saver)
        terminal = graph.get_state({"configurable": {"thread_id": prefix + "terminal"}}).values["messages"]
        waiting = graph.get_state({"configurable": {"thread_id": prefix + "waiting"}})
    assert [m.type for m in terminal] == ["human", "ai"]
    assert terminal[-1].response_metadata["mtrag"]["citations"][0]["document_ids"] == ["bees"]
    assert snapshot_question(waiting).startswith("Which library do you mean")
