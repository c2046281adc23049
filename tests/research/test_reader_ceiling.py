"""research.reader_ceiling: right answers reachable over variant runs; the decline threshold replayed."""

from __future__ import annotations

import json

from research import reader_ceiling


def _write_run(folder, verdicts):
    folder.mkdir()
    (folder / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")
    return folder


def _verdict(task_id, right, follow_up=False, answerable=True):
    return {"task_id": task_id, "right": right, "follow_up": follow_up, "answerable": answerable}


def test_a_task_is_reachable_when_any_run_answered_it_right(tmp_path, capsys):
    first = _write_run(
        tmp_path / "a",
        [_verdict("d-1<::>1", True), _verdict("d-1<::>2", False, True), _verdict("d-2<::>1", False),
         _verdict("d-3<::>1", False, answerable=False)],
    )  # fmt: skip
    second = _write_run(
        tmp_path / "b",
        [_verdict("d-1<::>1", False), _verdict("d-1<::>2", True, True), _verdict("d-2<::>1", False),
         _verdict("d-3<::>1", True, answerable=False)],
    )  # fmt: skip
    assert reader_ceiling.main(["documents", str(first), str(second)]) == 0
    printed = capsys.readouterr().out
    assert "| a | 1 | 1 | 0 |" in printed and "| b | 1 | 0 | 1 |" in printed
    # the unanswerable task's "right" is not counted; d-2 turn 1 is right in no run
    assert "**2 (67%)**" in printed and "Right in no run (1): d-2<::>1" in printed


def test_a_missing_verdicts_file_is_named(tmp_path, capsys):
    assert reader_ceiling.main(["documents", str(tmp_path)]) == 2
    assert "verdicts.jsonl: no such file" in capsys.readouterr().err


def test_the_closest_default_sentence_is_checked_for_the_key_facts(tmp_path):
    # zstd-4 turn 2 of the real-documents set: "What build type does the Meson project use by default?"
    folder = _write_run(tmp_path / "rd", [_verdict("zstd-4<::>2", False)])
    passage = "Meson is supported. Note that default build type is release. Other defaults apply elsewhere."
    record = {"task_id": "zstd-4<::>2", "input": [{"speaker": "user", "text": "Which build type by default?"}],
              "contexts": [{"document_id": "d", "text": passage}], "route": {}}  # fmt: skip
    (folder / "predictions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")

    def embed(texts):  # the question, then every sentence: the one about the build type is the closest
        return [[1.0, 0.0]] + [[1.0, 0.0] if "build type" in t else [0.0, 1.0] for t in texts[1:]]

    (row,) = reader_ceiling.default_rows(folder, embed)
    assert row["quote"] == "Note that default build type is release." and row["quote_holds_facts"]
    assert not row["right"]
    assert "missed answers: the quote holds the facts for 1 of 1" in reader_ceiling.render_defaults([row])
