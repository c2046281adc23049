"""Conversation memory: a thread's conversation survives a killed process (SQLite) and lives in PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.checkpoints import open_checkpointer, pending_question
from mtrag_graph.testing import fake_context
from tests.conftest import REPO
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES, judge

# titled as the corpora title them: the clarifying question names the alternatives by title
PASSAGES = [
    {"document_id": f"d{i}", "text": text, "title": title}
    for i, (text, title) in enumerate(zip(LIBRARIES, TITLES, strict=True))
]


def user_turn(text: str, passages: list[dict]) -> dict:
    return {"messages": [HumanMessage(text)], "contexts": passages}


def turns(state: dict) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in state["messages"]]


MODELS = ["--small-model", "scripted:yes", "--large-model", "scripted:yes|The library opens at 9 am.",
          "--reranker", "lexical", "--embedder", "hashing:64", "--no-clarify"]  # fmt: skip


def _chat_process(db, passages_file) -> subprocess.Popen:
    command = [sys.executable, "-m", "mtrag_graph.cli", "chat", "--passages", str(passages_file),
               "--thread", "kept", "--checkpointer", str(db), *MODELS]  # fmt: skip
    return subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )


def test_a_killed_chat_process_continues_its_thread_after_a_restart(tmp_path):
    db, passages_file = tmp_path / "chat.sqlite", tmp_path / "passages.jsonl"
    passages_file.write_text(
        "".join(f'{{"document_id": "d{i}", "text": "{t}"}}\n' for i, t in enumerate(LIBRARIES))
    )
    first = _chat_process(db, passages_file)
    first.stdin.write("When does the Alameda library open?\n")
    first.stdin.flush()
    while "bot>" not in (line := first.stdout.readline()):
        assert line, "the chat ended before answering"
    first.kill()  # no clean shutdown: the turn must already be in the checkpoint
    first.wait()

    second = _chat_process(db, passages_file)
    output, _ = second.communicate("And the Monterey library?\n", timeout=120)
    assert "thread kept: continuing, 2 turns so far" in output
    assert "you> When does the Alameda library open?" in output
    with open_checkpointer(db) as saver:
        saved = build_graph(checkpointer=saver).get_state({"configurable": {"thread_id": "kept"}})
    said = turns(saved.values)
    assert [speaker for speaker, _ in said] == ["human", "ai", "human", "ai"]
    assert said[2][1] == "And the Monterey library?"


def test_the_api_keeps_each_thread_apart_and_feeds_history_to_the_next_turn(tmp_path):
    # answers of their own: one that repeated the turn before would be asked again without the conversation
    context = fake_context(
        generate=["The library opens at nine.", "Monterey is on the coast.", "It opens at noon on Sundays."]
    )
    with open_checkpointer(tmp_path / "chat.sqlite") as saver:
        chat = build_graph(checkpointer=saver)
        one, two = ({"configurable": {"thread_id": name}} for name in ("one", "two"))
        chat.invoke(user_turn("When does the Alameda library open?", PASSAGES), one, context=context)
        chat.invoke(user_turn("Where is Monterey?", PASSAGES), two, context=context)
        state = chat.invoke(user_turn("And on Sundays?", PASSAGES), one, context=context)
    assert len(state["messages"]) == 4
    conversation = str(context.generate_model.calls[-1]["messages"][-1].content).split(
        "Conversation so far:"
    )[1]
    assert (
        "User: When does the Alameda library open?" in conversation
        and "Where is Monterey" not in conversation
    )


def test_a_clarifying_question_pauses_the_chat_and_the_reply_resumes_it(tmp_path):
    context = fake_context(clarify=True, clarify_model=judge(QUESTION_ASKED))
    config = {"configurable": {"thread_id": "ask"}}
    with open_checkpointer(tmp_path / "chat.sqlite") as saver:
        chat = build_graph(checkpointer=saver)
        paused = chat.invoke(user_turn("When does this library open?", PASSAGES), config, context=context)
        assert pending_question(paused) == QUESTION_ASKED
    with open_checkpointer(tmp_path / "chat.sqlite") as saver:  # reopened: the pause was saved
        state = build_graph(checkpointer=saver).invoke(Command(resume="Alameda"), config, context=context)
    assert [text for _, text in turns(state)][:3] == [
        "When does this library open?",
        QUESTION_ASKED,
        "Alameda",
    ]
    assert turns(state)[3][0] == "ai"


def test_a_thread_persists_in_postgresql_across_connections(postgres_url):
    pytest.importorskip("langgraph.checkpoint.postgres")
    thread = {"configurable": {"thread_id": f"pg-{uuid.uuid4().hex}"}}
    with open_checkpointer(postgres_url) as saver:
        build_graph(checkpointer=saver).invoke(
            user_turn("When does the Alameda library open?", PASSAGES), thread, context=fake_context()
        )
    with open_checkpointer(postgres_url) as saver:
        chat = build_graph(checkpointer=saver)
        assert len(chat.get_state(thread).values["messages"]) == 2
        state = chat.invoke(user_turn("And the Monterey one?", PASSAGES), thread, context=fake_context())
    assert len(state["messages"]) == 4


def _strict_chat(checkpointer: str, thread: str, passages_file, line: str) -> subprocess.CompletedProcess:
    """One chat process with LangGraph's strict checkpoint loading, as a restart would start it."""
    # the model declines, the decline is retried, the turn abstains: the state holds the retry's reason
    # and the abstention's, the kinds of value a checkpoint must store as plain data
    models = ["--small-model", "scripted:yes", "--large-model", "scripted:yes|I don't know.",
              "--reranker", "lexical", "--embedder", "hashing:64"]  # fmt: skip
    command = [sys.executable, "-m", "mtrag_graph.cli", "chat", "--passages", str(passages_file),
               "--thread", thread, "--checkpointer", checkpointer, *models]  # fmt: skip
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "always"}
    return subprocess.run(command, cwd=REPO, input=line + "\n", capture_output=True, text=True, timeout=180,
                          env=env)  # fmt: skip


def _strict_thread_goes_on(checkpointer: str, tmp_path) -> None:
    passages_file = tmp_path / "passages.jsonl"
    passages_file.write_text(
        "".join(f'{{"document_id": "d{i}", "text": "{t}"}}\n' for i, t in enumerate(LIBRARIES))
    )
    thread = f"strict-{uuid.uuid4().hex[:8]}"
    first = _strict_chat(checkpointer, thread, passages_file, "When does the Alameda library open?")
    second = _strict_chat(checkpointer, thread, passages_file, "And the Monterey library?")
    for run in (first, second):
        assert run.returncode == 0, run.stderr
        seen = run.stdout + run.stderr
        assert "unregistered type" not in seen and "deserializ" not in seen.lower(), seen
    assert "continuing, 2 turns so far" in second.stdout
    assert second.stdout.count("bot> ") >= 2  # the saved answer, then the new one


def test_a_thread_goes_on_after_a_restart_with_strict_checkpoint_loading_in_sqlite(tmp_path):
    _strict_thread_goes_on(str(tmp_path / "chat.sqlite"), tmp_path)


def test_a_thread_goes_on_after_a_restart_with_strict_checkpoint_loading_in_postgresql(
    postgres_url, tmp_path
):
    pytest.importorskip("langgraph.checkpoint.postgres")
    _strict_thread_goes_on(postgres_url, tmp_path)
