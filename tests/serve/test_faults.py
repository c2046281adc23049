"""The served chat under faults (issue 38): a thread deleted while it answers, storage as a thread
grows, text that cannot be encoded, blank messages and stale resends, limits. The real app on SQLite
and on PostgreSQL (``MTRAG_POSTGRES_URL``, or a server ``scripts/ci_postgres.sh`` starts); scripted
models."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.serve.app import ServeConfig, create_app
from tests.serve.client import events, served, user_message
from tests.serve.fakes import ANSWERS, PASSAGES, generate, serve_context, write_passages


@pytest.fixture(params=["sqlite", "postgres"])
def checkpointer(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "chat.sqlite")
    pytest.importorskip("langgraph.checkpoint.postgres")
    return request.getfixturevalue("postgres_url")


def thread(client, **headers: str) -> str:
    response = client.post("/api/threads", json={}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["thread_id"]


def stored(checkpointer: str, text: str) -> bool:
    """Whether the checkpointer's database holds ``text`` anywhere a thread's data goes (checkpoints,
    their metadata, writes, blobs, thread rows); checkpoints keep strings as UTF-8 bytes."""
    needle = text.encode()
    if checkpointer.startswith("postgresql://"):
        import psycopg  # noqa: PLC0415 - the postgres extra

        searches = (
            ("SELECT 1 FROM checkpoints WHERE position(%s in checkpoint::text || metadata::text) > 0", text),
            ("SELECT 1 FROM checkpoint_blobs WHERE position(%s::bytea in blob) > 0", needle),
            ("SELECT 1 FROM checkpoint_writes WHERE position(%s::bytea in blob) > 0", needle),
            ("SELECT 1 FROM mtrag_threads WHERE position(%s in thread_id || title) > 0", text),
        )
        with psycopg.connect(checkpointer) as connection:
            return any(connection.execute(sql + " LIMIT 1", (value,)).fetchone() for sql, value in searches)
    import sqlite3  # noqa: PLC0415

    searches = (
        ("SELECT 1 FROM checkpoints WHERE instr(checkpoint, ?) OR instr(metadata, ?)", (needle, needle)),
        ("SELECT 1 FROM writes WHERE instr(value, ?)", (needle,)),
        ("SELECT 1 FROM mtrag_threads WHERE instr(thread_id || title, ?)", (text,)),
    )
    connection = sqlite3.connect(checkpointer)
    try:
        return any(connection.execute(sql + " LIMIT 1", values).fetchone() for sql, values in searches)
    finally:
        connection.close()


def thread_rows(checkpointer: str, thread_id: str) -> dict[str, int]:
    """How many rows of each checkpoint table belong to the thread."""
    tables = ("checkpoints", "checkpoint_writes", "checkpoint_blobs", "mtrag_deleted_threads")
    if checkpointer.startswith("postgresql://"):
        import psycopg  # noqa: PLC0415

        with psycopg.connect(checkpointer) as connection:
            return {
                t: connection.execute(
                    f"SELECT COUNT(*) FROM {t} WHERE thread_id = %s", (thread_id,)
                ).fetchone()[0]
                for t in tables
            }
    import sqlite3  # noqa: PLC0415

    connection = sqlite3.connect(checkpointer)
    try:
        return {
            t: connection.execute(f"SELECT COUNT(*) FROM {t} WHERE thread_id = ?", (thread_id,)).fetchone()[0]
            for t in ("checkpoints", "writes", "mtrag_deleted_threads")
        }
    finally:
        connection.close()


def slow_context(delay_s: float = 1.0) -> Any:
    """The scripted models, the answer taking ``delay_s``: a turn is still running when a test acts."""

    def slow_generate(messages: list[Any], options: dict[str, Any]) -> str:
        time.sleep(delay_s)
        return generate(messages, options)

    return serve_context(generate_model=ScriptedChatModel(responder=slow_generate))


def send_in_background(client, thread_id: str, text: str) -> tuple[threading.Thread, list]:
    found: list = []
    sender = threading.Thread(target=lambda: found.extend(events(client, thread_id, text, after=0)))
    sender.start()
    return sender, found


def wait_for_lock(service, thread_id: str) -> None:
    """Until a turn of the thread holds its lock (it runs)."""
    deadline = time.monotonic() + 10
    while thread_id not in service.locks._held:
        assert time.monotonic() < deadline, "the turn did not start"
        time.sleep(0.01)


# -- 1. delete means deleted ----------------------------------------------------------------------


def test_a_thread_deleted_while_a_turn_runs_leaves_nothing_of_it(checkpointer, tmp_path):
    question = f"Why do bees dance? (asked as {uuid.uuid4().hex})"
    with served(checkpointer, slow_context()) as client:
        service = client.app.state.service
        thread_id = thread(client)
        sender, found = send_in_background(client, thread_id, question)
        wait_for_lock(service, thread_id)
        assert client.delete(f"/api/threads/{thread_id}").status_code == 204
        sender.join(timeout=30)
        assert client.get(f"/api/threads/{thread_id}").status_code == 404
    assert found[-1] == ("error", {"detail": "the thread was deleted"})
    assert not stored(checkpointer, question)
    assert not stored(checkpointer, thread_id)
    assert not any(thread_rows(checkpointer, thread_id).values())
    if not checkpointer.startswith("postgresql://"):
        assert not (Path(f"{checkpointer}.locks") / thread_id).exists()


def test_a_thread_deleted_on_another_instance_while_it_answers_leaves_nothing_of_it(checkpointer):
    question = f"Why do bees dance? (asked as {uuid.uuid4().hex})"
    with served(checkpointer, slow_context()) as first, served(checkpointer) as second:
        thread_id = thread(first)
        sender, found = send_in_background(first, thread_id, question)
        wait_for_lock(first.app.state.service, thread_id)
        assert second.delete(f"/api/threads/{thread_id}").status_code == 204
        sender.join(timeout=30)
    assert found[-1][0] == "error"
    assert not stored(checkpointer, question)
    assert not any(thread_rows(checkpointer, thread_id).values())


def test_what_a_deleted_thread_left_behind_a_dead_instance_goes_at_the_next_sweep(checkpointer):
    from mtrag_graph.serve.threads import ThreadLocks  # noqa: PLC0415

    question = f"Why do bees dance? (asked as {uuid.uuid4().hex})"
    with served(checkpointer, delete_wait_s=0.1) as client:
        service = client.app.state.service
        thread_id = thread(client)
        events(client, thread_id, question, after=0)
        elsewhere = ThreadLocks(checkpointer)  # another instance's turn holds the thread, then dies
        assert elsewhere.acquire(thread_id)
        assert client.delete(f"/api/threads/{thread_id}").status_code == 204
        assert client.get(f"/api/threads/{thread_id}").status_code == 404
        assert stored(checkpointer, question)  # its turn has not stopped
        elsewhere.release(thread_id)
        elsewhere.close()
        service.sweep()
    assert not stored(checkpointer, question)
    assert not any(thread_rows(checkpointer, thread_id).values())


def test_retention_removes_the_lock_file_with_the_thread(tmp_path):
    checkpointer = str(tmp_path / "chat.sqlite")
    with served(checkpointer, retention_days=1) as client:
        service = client.app.state.service
        thread_id = thread(client)
        events(client, thread_id, "Why do bees dance?", after=0)
        assert (Path(f"{checkpointer}.locks") / thread_id).exists()
        with service.store._cursor() as cursor:
            cursor.execute("UPDATE mtrag_threads SET updated_at = ?", (time.time() - 2 * 86400,))
        assert service.sweep() == 1
    assert not (Path(f"{checkpointer}.locks") / thread_id).exists()
    assert not stored(checkpointer, "bees")


# -- 2. storage stays bounded ---------------------------------------------------------------------

WORDS = "honey bees dance waggle flowers hive nectar pollen colony forager direction distance sun".split()


def big_passages(total_chars: int = 230_000, size: int = 3800) -> list[dict[str, Any]]:
    """About ``total_chars`` of passages, each ``size`` characters of words."""
    passages = []
    for number in range(total_chars // size):
        words = [WORDS[(number * 7 + i * 3) % len(WORDS)] for i in range(size // 6)]
        passages.append({"document_id": f"p{number}", "title": f"Passage {number}", "text": " ".join(words)})
    return passages


def database_bytes(checkpointer: str) -> int:
    if checkpointer.startswith("postgresql://"):
        import psycopg  # noqa: PLC0415

        with psycopg.connect(checkpointer) as connection:
            return int(
                connection.execute(
                    "SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY['checkpoints', 'checkpoint_blobs', "
                    "'checkpoint_writes', 'mtrag_threads']) AS c"
                ).fetchone()[0]
            )
    return sum(os.path.getsize(p) for p in (checkpointer, f"{checkpointer}-wal") if os.path.exists(p))


def test_twenty_long_turns_over_a_large_passages_file_keep_one_checkpoint_and_a_few_megabytes(checkpointer):
    passages = big_passages()
    config = ServeConfig(checkpointer=checkpointer, passages=passages)
    from fastapi.testclient import TestClient  # noqa: PLC0415

    with TestClient(create_app(config, serve_context(clarify=False))) as client:
        thread_id = thread(client)
        before = database_bytes(checkpointer)
        for number in range(20):
            question = f"{number}: " + ("Why do honey bees dance for the colony? " * 100)[:3990]
            assert events(client, thread_id, question, after=2 * number)[-1][0] == "done"
            rows = thread_rows(checkpointer, thread_id)
            assert rows["checkpoints"] == 1, rows
        grown = database_bytes(checkpointer) - before
        assert len(client.get(f"/api/threads/{thread_id}").json()["turns"]) == 40
    # the bound for SQLite; PostgreSQL's tables keep dead row versions until VACUUM reuses them
    assert grown <= (4 if checkpointer.endswith(".sqlite") else 12) * 2**20, grown


def test_a_thread_waiting_on_a_clarifying_question_keeps_what_its_reply_resumes(checkpointer):
    with served(checkpointer) as client:
        thread_id = thread(client)
        asked = events(client, thread_id, "When does this library open?", after=0)
        assert asked[-1][0] == "interrupt"
        answered = events(client, thread_id, "the Alameda one", after=asked[-1][1]["turns"])
        assert answered[-1][1]["answer"] == ANSWERS["library"]
        assert thread_rows(checkpointer, thread_id)["checkpoints"] == 1


def test_a_thread_takes_at_most_its_limit_of_messages(tmp_path):
    with served(str(tmp_path / "c.sqlite"), max_messages=2) as client:
        thread_id = thread(client)
        events(client, thread_id, "Why do bees dance?", after=0)
        events(client, thread_id, "Why do bees dance?", after=2)
        refused = client.post(f"/api/threads/{thread_id}/messages", json={"text": "And ants?", "after": 4})
    assert refused.status_code == 409 and "limit of 2 messages" in refused.json()["detail"]


def test_an_owner_has_at_most_its_limit_of_threads(tmp_path):
    alice, bob = {"X-API-Key": "alice-key"}, {"X-API-Key": "bob-key"}
    with served(str(tmp_path / "c.sqlite"), api_keys=["alice-key", "bob-key"], max_threads=2) as client:
        thread(client, **alice)
        thread(client, **alice)
        refused = client.post("/api/threads", json={}, headers=alice)
        assert refused.status_code == 409 and "2 conversations" in refused.json()["detail"]
        thread(client, **bob)  # another key's threads are its own


# -- 3. every stream ends -------------------------------------------------------------------------


def test_text_that_cannot_be_encoded_is_replaced_and_the_stream_ends_and_the_thread_stays_readable(
    checkpointer,
):
    hostile = [{**PASSAGES[0], "url": "https://example.org/\ud800bees", "title": "Bees \udfff"}]
    config = ServeConfig(
        checkpointer=checkpointer,
        passages=hostile,
    )

    def answer(messages: list[Any], options: dict[str, Any]) -> str:
        return ANSWERS["bees"].replace("flowers", "flowers \ud83d")

    from fastapi.testclient import TestClient  # noqa: PLC0415

    context = serve_context(generate_model=ScriptedChatModel(responder=answer), grounding="off")
    with TestClient(create_app(config, context), raise_server_exceptions=False) as client:
        thread_id = thread(client)
        body = json.dumps({"text": "Why do bees dance? \udc80", "after": 0}).encode()  # a JSON escape
        headers = {"Content-Type": "application/json"}
        refused = client.post(f"/api/threads/{thread_id}/messages", content=body, headers=headers)
        found = events(client, thread_id, "Why do bees dance?", after=0)
        saved = client.get(f"/api/threads/{thread_id}")
    assert refused.status_code == 422 and refused.json()["problems"][0]["field"] == "text"
    kind, done = found[-1]
    assert kind == "done", found
    assert "\ufffd" in done["answer"] and done["sources"][0]["url"] == "https://example.org/\ufffdbees"
    # the checkpointer stored the answer with its own replacement character
    assert saved.status_code == 200 and saved.json()["last"]["answer"].startswith("Honey bees dance")
    assert saved.json()["last"]["sources"][0]["title"] in ("Bees \ufffd", "Bees ?")


def test_a_turn_that_fails_ends_its_stream_with_an_error(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client, pytest.MonkeyPatch.context() as patch:
        service = client.app.state.service
        thread_id = thread(client)

        def fails(*args: Any) -> None:
            raise RuntimeError("the graph broke")

        patch.setattr(service, "run_turn", fails)
        found = events(client, thread_id, "Why do bees dance?", after=0)
    assert found == [("error", {"detail": "the answer failed; send the message again"})]


# -- 4. input refused before anything is saved; exact resends -------------------------------------


@pytest.mark.parametrize("blank", ["   ", "\t\n", "\u3000"])
def test_a_blank_message_is_refused_with_422_and_nothing_is_saved(tmp_path, blank):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        response = client.post(f"/api/threads/{thread_id}/messages", json={"text": blank, "after": 0})
        assert response.status_code == 422
        assert response.json()["problems"][0]["field"] == "text"
        assert "blank" in response.json()["problems"][0]["problem"]
        assert client.get(f"/api/threads/{thread_id}").json()["turns"] == []
        assert events(client, thread_id, "Why do bees dance?", after=0)[-1][0] == "done"


def test_a_stale_resend_of_an_earlier_message_is_refused_not_answered_with_a_later_answer(checkpointer):
    with served(checkpointer) as client:
        thread_id = thread(client)
        first = events(client, thread_id, "Why do bees dance?", after=0)
        second = events(client, thread_id, "Do unicorns exist?", after=2)
        stale = client.post(
            f"/api/threads/{thread_id}/messages", json={"text": "Why do bees dance?", "after": 0}
        )
        again = events(client, thread_id, "Do unicorns exist?", after=2)
    assert first[-1][1]["answer"] != second[-1][1]["answer"]
    assert stale.status_code == 409 and "not this thread's last message" in stale.json()["detail"]
    assert again == [("done", {**second[-1][1], "replayed": True})]


def test_a_resend_with_other_text_is_refused(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        events(client, thread_id, "Why do bees dance?", after=0)
        other = client.post(f"/api/threads/{thread_id}/messages", json={"text": "Do ants dance?", "after": 0})
    assert other.status_code == 409


def test_the_reply_to_a_clarifying_question_sent_again_replays_its_answer(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        asked = events(client, thread_id, "When does this library open?", after=0)
        assert events(client, thread_id, "When does this library open?", after=0) == [
            ("interrupt", asked[-1][1])
        ]
        after = asked[-1][1]["turns"]
        answered = events(client, thread_id, "the Alameda one", after=after)
        assert events(client, thread_id, "the Alameda one", after=after) == [
            ("done", {**answered[-1][1], "replayed": True})
        ]
        stale = client.post(
            f"/api/threads/{thread_id}/messages", json={"text": "When does this library open?", "after": 0}
        )
    assert stale.status_code == 409


def test_a_new_message_after_an_unanswered_one_is_refused_until_that_one_is_sent_again(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        service = client.app.state.service
        inputs = user_message(service, "Why do bees dance?")
        # an instance saved the user's turn and stopped before answering it
        service.graph.update_state(service.config_of(thread_id), inputs, as_node="__start__")
        next_one = client.post(f"/api/threads/{thread_id}/messages", json={"text": "And ants?", "after": 1})
        assert next_one.status_code == 409 and "after=0" in next_one.json()["detail"]
        found = events(client, thread_id, "Why do bees dance?", after=0)
        turns = client.get(f"/api/threads/{thread_id}").json()["turns"]
    assert found[-1][0] == "done"
    assert [t["speaker"] for t in turns] == ["user", "agent"]


# -- 6. the smaller ones --------------------------------------------------------------------------


def serve_args(*options: str) -> Any:
    from mtrag_graph.cli import build_parser  # noqa: PLC0415

    return build_parser().parse_args(["serve", "--passages", str(write_passages_file()), *options])


def write_passages_file() -> Path:
    import tempfile  # noqa: PLC0415

    return write_passages(Path(tempfile.mkdtemp()) / "passages.jsonl")


def test_a_loopback_server_answers_only_requests_naming_a_loopback_host():
    from fastapi.testclient import TestClient  # noqa: PLC0415

    from mtrag_graph.commands._options import context_from_args  # noqa: PLC0415
    from mtrag_graph.serve.server import allowed_hosts, build_app  # noqa: PLC0415

    args = serve_args(
        "--checkpointer", str(write_passages_file().parent / "c.sqlite"), *stand_in_free_models()
    )
    assert allowed_hosts(args) == ["localhost", "127.0.0.1", "[::1]"]
    assert allowed_hosts(serve_args("--host", "0.0.0.0")) == []  # behind a proxy: --allowed-host NAME
    assert allowed_hosts(serve_args("--host", "0.0.0.0", "--allowed-host", "chat.example")) == [
        "chat.example"
    ]
    with TestClient(build_app(args, context_from_args(args))) as client:
        rebound = client.get("/api/threads", headers={"Host": "attacker.example"})
        assert rebound.status_code == 400 and rebound.text == "Invalid host header"
        assert client.get("/api/threads", headers={"Host": "127.0.0.1:8000"}).status_code == 200
        assert client.get("/api/threads", headers={"Host": "localhost"}).status_code == 200
        assert client.get("/health", headers={"Host": "[::1]:8000"}).status_code == 200


def test_the_host_check_refuses_an_unknown_host_and_admits_the_names_and_subdomains_given(tmp_path):
    hosts = ["chat.example", "*.corp.example", "www.docs.example"]
    with served(str(tmp_path / "c.sqlite"), allowed_hosts=hosts) as client:
        for unknown in ("attacker.example", "chat.example.attacker.example", "corp.example"):
            refused = client.get("/health", headers={"Host": unknown})
            assert refused.status_code == 400, unknown
        # no redirect to the www. name given: only the names given are answered
        bare = client.get("/health", headers={"Host": "docs.example"}, follow_redirects=False)
        assert bare.status_code == 400
        for known in ("chat.example", "CHAT.example:443", "eu.corp.example"):
            assert client.get("/health", headers={"Host": known}).status_code == 200, known


def test_a_host_wildcard_starlette_cannot_match_is_refused_when_the_command_starts():
    from mtrag_graph.serve.server import allowed_hosts  # noqa: PLC0415

    with pytest.raises(SystemExit, match=r"\*\.example\.org"):
        allowed_hosts(serve_args("--host", "0.0.0.0", "--allowed-host", "chat*.example"))
    assert allowed_hosts(serve_args("--host", "0.0.0.0", "--allowed-host", "*.example")) == ["*.example"]


def stand_in_free_models() -> list[str]:
    """Model options that load nothing (the app is built, no turn is answered)."""
    return ["--small-model", "scripted:yes", "--large-model", "scripted:yes", "--reranker", "lexical",
            "--embedder", "hashing:64"]  # fmt: skip


def test_a_request_that_changes_state_needs_a_json_body(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        assert client.post("/api/threads").status_code == 415  # a cross-site form or a bare POST
        form = client.post("/api/threads", content=b"{}", headers={"Content-Type": "text/plain"})
        assert form.status_code == 415 and "application/json" in form.json()["detail"]
        assert (
            client.post("/api/threads", content=b"", headers={"Content-Type": "application/json"}).status_code
            == 422
        )
        thread_id = thread(client)
        message = client.post(
            f"/api/threads/{thread_id}/messages",
            content=b'{"text": "hi"}',
            headers={"Content-Type": "text/plain"},
        )
        assert message.status_code == 415
        assert len(client.get("/api/threads").json()["threads"]) == 1


def test_the_api_documentation_is_served_from_the_package(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        page = client.get("/docs")
        assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
        scripts = [line for line in page.text.splitlines() if "<script" in line or "stylesheet" in line]
        assert scripts and all('"/static/' in line for line in scripts)
        bundle = client.get("/static/swagger-ui-bundle.js")
        assert bundle.status_code == 200 and "SwaggerUIBundle" in bundle.text
        assert client.get("/static/swagger-ui.css").status_code == 200
        assert client.get("/static/docs.js").status_code == 200


def test_a_chunked_body_over_the_limit_gets_413(tmp_path):
    with served(str(tmp_path / "c.sqlite"), max_body_bytes=2000) as client:
        thread_id = thread(client)

        def chunks():
            yield b'{"text": "'
            for _ in range(70):
                yield b"a" * 1000
            yield b'"}'

        response = client.post(
            f"/api/threads/{thread_id}/messages",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        assert "content-length" not in response.request.headers
        assert response.status_code == 413 and "2000 bytes" in response.json()["detail"]


def test_a_body_slower_than_the_timeout_gets_408():
    import asyncio  # noqa: PLC0415

    from mtrag_graph.serve.app import BodyLimit  # noqa: PLC0415

    sent: list[dict] = []
    reached: list[bool] = []

    async def app(scope, receive, send):
        reached.append(True)

    async def slow_client():
        await asyncio.sleep(10)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    middleware = BodyLimit(app, limit=1000, timeout_s=0.2)
    asyncio.run(middleware({"type": "http", "headers": []}, slow_client, send))
    assert not reached and sent[0]["status"] == 408


def test_a_connection_whose_request_head_is_too_slow_is_closed():
    import asyncio  # noqa: PLC0415
    import socket  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    from mtrag_graph.serve.http import HeadDeadlineProtocol  # noqa: PLC0415

    class Quick(HeadDeadlineProtocol):
        head_timeout_s = 0.3

    async def app(scope, receive, send):
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http=Quick, log_level="warning"))
    runner = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as fast:
            fast.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200" in fast.recv(1000)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHo")
            started = time.monotonic()
            assert slow.recv(1000) == b""  # closed by the server
            assert time.monotonic() - started < 3
    finally:
        server.should_exit = True
        runner.join(timeout=10)


@pytest.mark.parametrize("days", ["-1", "0", "nan"])
def test_retention_days_must_be_positive(days, capsys):
    with pytest.raises(SystemExit):
        serve_args("--retention-days", days)
    assert "more than 0 days" in capsys.readouterr().err


def test_api_keys_are_stored_as_hmacs_under_the_deployments_secret(tmp_path):
    import hashlib  # noqa: PLC0415
    import sqlite3  # noqa: PLC0415

    checkpointer = str(tmp_path / "c.sqlite")
    key = {"X-API-Key": "alice-key"}
    with served(checkpointer, api_keys=["alice-key"]) as client:
        mine = thread(client, **key)
    with served(str(tmp_path / "other.sqlite"), api_keys=["alice-key"]) as client:
        thread(client, **key)
    owners = [sqlite3.connect(p).execute("SELECT owner FROM mtrag_threads").fetchone()[0]
              for p in (checkpointer, str(tmp_path / "other.sqlite"))]  # fmt: skip
    assert owners[0] != owners[1]  # another deployment, another secret
    assert hashlib.sha256(b"alice-key").hexdigest()[:32] not in owners and "alice-key" not in owners
    # a thread made before the ids were salted is the key's own still
    connection = sqlite3.connect(checkpointer)
    connection.execute("UPDATE mtrag_threads SET owner = ?", (hashlib.sha256(b"alice-key").hexdigest()[:32],))
    connection.commit()
    connection.close()
    with served(checkpointer, api_keys=["alice-key"]) as client:
        assert [t["thread_id"] for t in client.get("/api/threads", headers=key).json()["threads"]] == [mine]


def test_api_keys_come_from_a_file_or_the_environment_not_the_command_line(tmp_path, monkeypatch, capsys):
    from fastapi.testclient import TestClient  # noqa: PLC0415

    from mtrag_graph.commands._options import context_from_args  # noqa: PLC0415
    from mtrag_graph.commands.serve import run  # noqa: PLC0415
    from mtrag_graph.serve.server import api_keys, build_app  # noqa: PLC0415

    keys = tmp_path / "keys"
    keys.write_text("# one key a line\nfile-key\n\n", encoding="utf-8")
    monkeypatch.setenv("MTRAG_API_KEYS", "env-key, other-key")
    args = serve_args("--api-key-file", str(keys), "--checkpointer", str(tmp_path / "c.sqlite"),
                      *stand_in_free_models())  # fmt: skip
    assert sorted(api_keys(args)) == ["env-key", "file-key", "other-key"]
    with TestClient(build_app(args, context_from_args(args)), base_url="http://localhost") as client:
        assert client.get("/api/threads").status_code == 401
        assert client.get("/api/threads", headers={"X-API-Key": "file-key"}).status_code == 200
    assert run(serve_args("--api-key", "secret")) == 2
    assert "--api-key-file" in capsys.readouterr().err
