"""The served API: threads, the streamed answer (steps, text that stands, citations), clarifying
questions, "I don't know", idempotent messages, and the service's limits (keys, sizes, errors, CORS,
retention). Real ASGI app and SQLite checkpointer; scripted models."""

from __future__ import annotations

import time

from mtrag_graph.models.fake import ScriptedChatModel
from tests.serve.client import events, served, user_message
from tests.serve.fakes import ANSWERS, generate, serve_context


def thread(client, **headers) -> str:
    response = client.post("/api/threads", json={}, headers=headers)
    assert response.status_code == 201
    return response.json()["thread_id"]


def test_health_and_the_openapi_document_are_served(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        assert client.get("/health").json()["status"] == "ok"
        paths = client.get("/openapi.json").json()["paths"]
        assert {"/api/threads", "/api/threads/{thread_id}", "/api/threads/{thread_id}/messages"} <= set(paths)
        assert client.get("/docs").status_code == 200


def test_the_openapi_document_declares_both_api_key_forms_on_the_api_operations_only(tmp_path):
    with served(str(tmp_path / "c.sqlite"), api_keys=["alice-key"]) as client:
        document = client.get("/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"}.items() <= schemes["Bearer key"].items()
    assert {"type": "apiKey", "in": "header", "name": "X-API-Key"}.items() <= schemes["X-API-Key"].items()
    operations = {(path, method): operation for path, item in document["paths"].items()
                  for method, operation in item.items()}  # fmt: skip
    api = {key: operation for key, operation in operations.items() if key[0].startswith("/api/")}
    assert len(api) == 5  # list, create, read, delete, message
    for operation in api.values():  # either header will do: two alternatives, not both at once
        assert operation["security"] == [{"Bearer key": []}, {"X-API-Key": []}]
    assert "security" not in operations[("/health", "get")]


def test_a_slow_answer_streams_keep_alive_comments_while_it_is_waited_for(tmp_path):
    def slow_generate(messages, options):
        time.sleep(0.5)  # a long answer being written: nothing to send meanwhile
        return generate(messages, options)

    context = serve_context(generate_model=ScriptedChatModel(responder=slow_generate))
    with served(str(tmp_path / "c.sqlite"), context, keepalive_s=0.05) as client:
        thread_id = thread(client)
        body = {"text": "Why do bees dance?", "after": 0}
        with client.stream("POST", f"/api/threads/{thread_id}/messages", json=body) as response:
            raw = "".join(response.iter_text())
    assert raw.count(": keep-alive\n\n") >= 3
    assert raw.index(": keep-alive") < raw.index("event: done")
    assert raw.endswith("\n\n") and raw.rsplit("event: ", 1)[1].startswith("done")


def test_an_answer_streams_its_steps_then_its_text_then_its_citations(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        found = events(client, thread(client), "Why do bees dance?", after=0)
    kinds = [kind for kind, _ in found]
    assert kinds.index("step") < kinds.index("text") < kinds.index("done") == len(kinds) - 1
    assert {"rewriting the question", "checking the passages", "writing the answer"} <= {
        data["label"] for kind, data in found if kind == "step"
    }
    assert kinds.count("text") == 2  # sentence by sentence, as each passed the checks
    done = found[-1][1]
    assert (
        "".join(data["text"] for kind, data in found if kind == "text") == done["answer"] == ANSWERS["bees"]
    )
    assert done["idk"] is False and done["parts"][0]["cites"] == [1]
    source = done["sources"][0]
    assert (source["title"], source["url"], source["page"]) == (
        "Honey bee dances",
        "https://example.org/bees",
        12,
    )
    assert source["text"].startswith("Honey bees dance")


def test_a_clarifying_question_is_an_interrupt_and_the_reply_resumes_the_turn(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        asked = events(client, thread_id, "When does this library open?", after=0)
        assert asked[-1][0] == "interrupt" and "Alameda Free Library" in asked[-1][1]["question"]
        assert client.get(f"/api/threads/{thread_id}").json()["waiting"] == asked[-1][1]["question"]
        answered = events(client, thread_id, "the Alameda one", after=asked[-1][1]["turns"])
        assert answered[-1][0] == "done" and answered[-1][1]["answer"] == ANSWERS["library"]
        assert answered[-1][1]["sources"][0]["document_id"] == "alameda"
        saved = client.get(f"/api/threads/{thread_id}").json()
    assert saved["waiting"] is None
    assert [t["speaker"] for t in saved["turns"]] == ["user", "agent", "user", "agent"]


def test_i_dont_know_is_an_answer_marked_as_such_not_an_error(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        found = events(client, thread(client), "Do unicorns exist?")
    kind, done = found[-1]
    assert kind == "done" and done["idk"] is True and done["abstain_reason"] == "gate_no"
    assert done["sources"] == [] and "error" not in [k for k, _ in found]


def test_a_message_sent_again_with_the_same_after_is_answered_once(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        first = events(client, thread_id, "Why do bees dance?", after=0)
        again = events(client, thread_id, "Why do bees dance?", after=0)
        turns = client.get(f"/api/threads/{thread_id}").json()["turns"]
    assert again == [("done", {**first[-1][1], "replayed": True})]
    assert len(turns) == 2


def test_a_turn_an_instance_did_not_finish_is_finished_by_the_message_sent_again(tmp_path):
    """An instance stopped after saving the user's turn and before answering it: the retry answers it."""
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        service = _service(client)
        graph = service.graph
        config = service.config_of(thread_id)
        graph.update_state(config, user_message(service, "Why do bees dance?"), as_node="__start__")
        assert graph.get_state(config).next == ("load_task",)
        found = events(client, thread_id, "Why do bees dance?", after=0)
        turns = client.get(f"/api/threads/{thread_id}").json()["turns"]
    assert found[-1][1]["answer"] == ANSWERS["bees"]
    assert [t["speaker"] for t in turns] == ["user", "agent"]


def test_a_message_an_instance_saved_without_taking_it_is_taken_once_when_sent_again(tmp_path):
    """An instance stopped right after saving the input checkpoint, before the input was applied."""
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        service = _service(client)
        config = service.config_of(thread_id)
        inputs = user_message(service, "Why do bees dance?")
        for _ in service.graph.stream(inputs, config, context=service.context, stream_mode="checkpoints"):
            break  # the input checkpoint is saved; nothing ran
        assert service.graph.get_state(config).next == ("__start__",)
        found = events(client, thread_id, "Why do bees dance?", after=0)
        turns = client.get(f"/api/threads/{thread_id}").json()["turns"]
    assert found[-1][1]["answer"] == ANSWERS["bees"]
    assert [t["speaker"] for t in turns] == ["user", "agent"]


def _service(client):
    return client.app.state.service


def test_with_api_keys_a_request_without_one_is_refused_and_each_key_sees_only_its_threads(tmp_path):
    alice, bob = {"Authorization": "Bearer alice-key"}, {"X-API-Key": "bob-key"}
    with served(str(tmp_path / "c.sqlite"), api_keys=["alice-key", "bob-key"]) as client:
        assert client.get("/api/threads").status_code == 401
        assert client.get("/api/threads", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/health").status_code == 200
        mine = thread(client, **alice)
        events(client, mine, "Why do bees dance?", **alice)
        assert client.get(f"/api/threads/{mine}", headers=bob).status_code == 404
        assert client.delete(f"/api/threads/{mine}", headers=bob).status_code == 404
        response = client.post(f"/api/threads/{mine}/messages", json={"text": "hi"}, headers=bob)
        assert response.status_code == 404
        assert [t["thread_id"] for t in client.get("/api/threads", headers=alice).json()["threads"]] == [mine]
        assert client.get("/api/threads", headers=bob).json()["threads"] == []


def test_oversized_bodies_and_messages_get_clear_4xx_answers(tmp_path):
    with served(str(tmp_path / "c.sqlite"), max_body_bytes=2000, max_message_chars=100) as client:
        thread_id = thread(client)
        url = f"/api/threads/{thread_id}/messages"
        too_big = client.post(
            url, content=b'{"text": "' + b"a" * 5000 + b'"}', headers={"Content-Type": "application/json"}
        )
        assert too_big.status_code == 413 and "2000 bytes" in too_big.json()["detail"]
        long_message = client.post(url, json={"text": "a" * 500})
        assert long_message.status_code == 413 and "100 characters" in long_message.json()["detail"]
        empty = client.post(url, json={"text": ""})
        assert empty.status_code == 422 and empty.json()["problems"][0]["field"] == "text"
        assert (
            client.post(url, content=b"{not json", headers={"Content-Type": "application/json"}).status_code
            == 422
        )


def test_an_internal_error_answers_500_without_a_stack_trace(tmp_path, monkeypatch):
    with served(str(tmp_path / "c.sqlite")) as client:
        thread_id = thread(client)
        service = _service(client)

        def broken(thread_id):
            raise RuntimeError("secret detail in /srv/app.py line 12")

        monkeypatch.setattr(service, "snapshot", broken)
        response = client.get(f"/api/threads/{thread_id}")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal error"}
    assert "secret" not in response.text and "Traceback" not in response.text


def test_cors_is_off_unless_an_origin_is_configured(tmp_path):
    preflight = {"Origin": "https://chat.example", "Access-Control-Request-Method": "POST"}
    with served(str(tmp_path / "a.sqlite")) as client:
        response = client.get("/api/threads", headers={"Origin": "https://chat.example"})
        assert "access-control-allow-origin" not in response.headers
    with served(str(tmp_path / "b.sqlite"), cors_origins=["https://chat.example"]) as client:
        response = client.options("/api/threads", headers=preflight)
        assert response.headers["access-control-allow-origin"] == "https://chat.example"


def test_deleting_a_thread_removes_its_checkpoints_and_retention_deletes_unused_threads(tmp_path):
    with served(str(tmp_path / "c.sqlite"), retention_days=1) as client:
        service = _service(client)
        kept, deleted, expired = thread(client), thread(client), thread(client)
        for thread_id in (kept, deleted, expired):
            events(client, thread_id, "Why do bees dance?")
        assert client.delete(f"/api/threads/{deleted}").status_code == 204
        assert client.get(f"/api/threads/{deleted}").status_code == 404
        assert service.graph.get_state(service.config_of(deleted)).values == {}
        with service.store._cursor() as cursor:
            cursor.execute(
                "UPDATE mtrag_threads SET updated_at = ? WHERE thread_id = ?",
                (time.time() - 2 * 86400, expired),
            )
        assert service.sweep() == 1
        assert service.graph.get_state(service.config_of(expired)).values == {}
        assert [t["thread_id"] for t in client.get("/api/threads").json()["threads"]] == [kept]


def test_the_page_is_served_with_a_policy_that_runs_only_its_own_script(tmp_path):
    with served(str(tmp_path / "c.sqlite")) as client:
        page = client.get("/")
        assert page.status_code == 200 and '<script src="/static/app.js"' in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
        assert client.get("/static/..%2Fapp.py").status_code == 404
