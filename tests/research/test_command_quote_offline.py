"""research.command_quote_offline: a recorded run as the graph with the how-to command quote writes it."""

from __future__ import annotations

import json

from research import command_quote_offline

README = "This method shows the help after an error.\n\n```js\nprogram.showHelpAfterError();\n```\n"
QUESTION = "How do I get the full help shown after a usage error?"
DRAFT = "Call the `showHelpAfterError` method of the `Commander.js` library. This method shows the help."


def _record(task_id, question, answer, **route):
    contexts = [{"document_id": "d0", "text": README}]
    return {"task_id": task_id, "input": [{"speaker": "user", "text": question}], "contexts": contexts,
            "predictions": [{"text": answer, "citations": []}],
            "route": {"standalone_question": question, "kept_passages": [{"document_id": "d0"}], **route}}  # fmt: skip


def test_a_how_to_answer_gets_the_line_its_draft_named_quoted_and_cited(tmp_path):
    records = [
        # the grounding check had dropped the sentence naming the method: its draft still finds the line
        _record("howto<::>1", QUESTION, "This method shows the help.", grounding={"answer_before": DRAFT}),
        _record("declined<::>1", QUESTION, "I don't know.", abstained=True),
        _record("what<::>1", "What does showHelpAfterError do?", "It shows the help."),
    ]
    source, target = tmp_path / "run.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert command_quote_offline.main([str(source), "-o", str(target)]) == 0
    out = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    quoted = out[0]["predictions"][0]
    assert (
        quoted["text"]
        == "This method shows the help.\n\nThe document says: \u201cprogram.showHelpAfterError();\u201d"
    )
    assert any(
        "program.showHelpAfterError();" in c["text"] and c["passages"] == [0] for c in quoted["citations"]
    )
    assert out[0]["route"]["grounding"]["command_quote"]["tokens"] == ["showHelpAfterError"]
    assert out[1:] == records[1:]  # a decline and a question that asks no how-to are copied as they are
