from __future__ import annotations

from research.moved_tasks import moved_tasks


def _task(conversation: str, collection: str, text: str, label: str = "ANSWERABLE") -> dict:
    return {
        "conversation_id": conversation,
        "task_id": f"{conversation}<::>1",
        "Collection": collection,
        "input": [{"speaker": "user", "text": f"What about {text}?"}],
        "targets": [{"speaker": "agent", "text": f"{text} is so."}],
        "contexts": [{"document_id": f"d-{conversation}", "title": text, "text": f"{text} text"}],
        "answerability": [label],
    }


def test_each_moved_task_keeps_its_question_and_gets_another_same_domain_conversations_passages():
    tasks = [
        _task("a", "mt-rag-clapnq-elser-512-100-20240503", "bees"),
        _task("b", "mt-rag-clapnq-elser-512-100-20240503", "ants"),
        _task("c", "mt-rag-fiqa-beir-elser-512-100-20240501", "stocks"),  # alone in its domain
        _task("d", "mt-rag-clapnq-elser-512-100-20240503", "moths", label="UNANSWERABLE"),
    ]
    moved = moved_tasks(tasks, count=3, seed=1)
    assert {m["task_id"] for m in moved} == {"a<::>1", "b<::>1"}
    for m in moved:
        original = next(t for t in tasks if t["task_id"] == m["task_id"])
        donor = next(t for t in tasks if t["task_id"] == m["moved_from"])
        assert m["input"] == original["input"] and m["contexts"] == donor["contexts"]
        assert donor["conversation_id"] != m["conversation_id"] and m["answerability"] == ["UNANSWERABLE"]
    assert tasks[0]["answerability"] == ["ANSWERABLE"]  # the input tasks are not changed
