"""research.general_terms_offline: which recorded answers are in general terms, and the run with them declined."""

from __future__ import annotations

import json

from research import general_terms_offline

VAGUE = "Updating worker nodes can vary depending on several factors."


def _record(task_id, answer, label, passage, **route):
    return {"task_id": task_id, "input": [{"speaker": "user", "text": "How long does an update take?"}],
            "answerability": [label], "contexts": [{"document_id": "d0", "text": passage}],
            "predictions": [{"text": answer}], "route": route}  # fmt: skip


def test_answers_in_general_terms_are_counted_declined_and_written_as_tasks(tmp_path, capsys):
    records = [
        _record("vague<::>1", VAGUE, "UNANSWERABLE", "Worker nodes are updated one at a time."),
        # the passage says it in the same words: the answer may repeat them
        _record(
            "said<::>1", "Updates typically take an hour.", "ANSWERABLE", "An update typically takes an hour."
        ),
        _record("declined<::>1", "I don't know.", "UNANSWERABLE", "Nothing.", abstain_reason="gate_no"),
    ]
    source, target, tasks = tmp_path / "run.jsonl", tmp_path / "out.jsonl", tmp_path / "tasks.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert general_terms_offline.main([str(source), "-o", str(target), "--tasks", str(tasks)]) == 0
    printed = capsys.readouterr().out
    assert "UNANSWERABLE: 1 of 1 answers in general terms" in printed
    assert "ANSWERABLE: 0 of 1 answers in general terms" in printed
    out = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert out[0]["route"]["abstain_reason"] == "general_terms"
    assert out[0]["predictions"][0]["text"] != VAGUE
    assert out[1:] == records[1:]
    fired = [json.loads(line) for line in tasks.read_text(encoding="utf-8").splitlines()]
    assert [t["task_id"] for t in fired] == ["vague<::>1"] and "predictions" not in fired[0]


def test_general_terms_the_passages_do_not_use():
    # MTRAG-UN dev Task C: an UNANSWERABLE turn answered from what the model knows in general
    answer = (
        "The time it takes to update worker nodes can vary depending on several factors. In general, "
        "updating worker nodes can take several hours."
    )
    passages = ["Worker nodes are updated one at a time. Pods are rescheduled first."]
    assert general_terms_offline.general_terms(answer, passages) == [
        "can vary",
        "depending on several",
        "in general",
    ]
    assert general_terms_offline.general_terms("To save more, you can consider an IRA.", passages) == [
        "you can consider"
    ]


def test_general_terms_a_passage_uses_may_be_repeated():
    passages = ["The  snapshot interval is\ntypically 60 seconds."]
    assert (
        general_terms_offline.general_terms("The snapshot interval is typically 60 seconds.", passages) == []
    )
    assert (
        general_terms_offline.general_terms("Borg uses 256-bit AES for the data.", passages) == []
    )  # nothing general
    assert general_terms_offline.general_terms("It usually runs nightly.", []) == ["usually"]
    assert general_terms_offline.general_terms("Its usual place is the top.", []) == []  # a whole word only
