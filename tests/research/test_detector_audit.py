from __future__ import annotations

from mtrag_graph.context import Context
from research.detector_audit import draft_state, problems_of, table

PASSAGE = {"document_id": "d1", "title": "Limits", "text": "Minors under the age of 18 may not submit data."}


def _task(question: str, answer: str, history: list[dict] | None = None) -> dict:
    return {
        "task_id": "c<::>2",
        "conversation_id": "c",
        "Collection": "mt-rag-govt-elser-512-100-20240611",
        "input": [*(history or []), {"speaker": "user", "text": question}],
        "targets": [{"speaker": "agent", "text": answer}],
        "contexts": [PASSAGE],
        "answerability": ["ANSWERABLE"],
    }


def test_a_peoples_answer_is_checked_as_the_draft_of_its_own_turn():
    earlier = [{"speaker": "user", "text": "Who may not submit data?"},
               {"speaker": "agent", "text": "Minors under the age of 18 may not submit data."}]  # fmt: skip
    repeat = draft_state(
        _task("Does it apply nationwide?", "Yes, minors under 18 may not, nationwide.", earlier)
    )
    plain = draft_state(_task("Who may not submit data?", "Minors under the age of 18."))
    assert repeat is not None and plain is not None and repeat["history"] == earlier
    found = problems_of([repeat, plain], Context())
    assert found[0][1] == ["repeats the previous answer instead of answering this question"]
    assert found[1][1] == []
    lines = table("set", found, examples=1)
    assert lines[0] == "### set: 1 of 2 people's answers found at fault"
    assert "| repeats the previous answer instead of answering this question | 1 |" in lines


def test_a_task_without_a_reference_answer_is_left_out():
    assert draft_state({**_task("Who?", "x"), "targets": []}) is None
