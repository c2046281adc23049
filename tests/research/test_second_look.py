"""research/second_look.py: the excerpt a draft would add, and the yes/no quote's ranking, on a scored run."""

from __future__ import annotations

import json

import numpy as np

from research import second_look

QUESTION = "How long does the benchmark run by default?"
FACT = "The benchmark runs for 3 seconds by default."
FILLER = " ".join(f"Option {i} tunes the compression dictionary for small inputs." for i in range(30))


def _run(tmp_path, answer, right, text):
    record = {"task_id": "zstd-6<::>2", "input": [{"speaker": "user", "text": QUESTION}],
              "contexts": [{"document_id": "d0", "text": text}], "predictions": [{"text": answer}],
              "route": {"standalone_question": QUESTION}, "status": "ok"}  # fmt: skip
    verdict = {"task_id": "zstd-6<::>2", "right": right, "idk": False}
    (tmp_path / "predictions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "verdicts.jsonl").write_text(json.dumps(verdict) + "\n", encoding="utf-8")
    return tmp_path


def test_a_wrong_answer_built_from_a_shown_sentence_is_counted_as_such(tmp_path):
    run = _run(tmp_path, "The benchmark runs for 30 seconds by default.", False, f"{FACT} {FILLER}")
    (row,) = second_look.excerpt_rows(run, None, budget=40)
    assert row["task_id"] == "zstd-6<::>2" and row["right"] is False
    assert row["shown_holds"]  # the question's excerpt showed the fact; the answer rests on a shown sentence
    assert row["closest_shown"]


def test_a_fact_the_excerpt_cut_is_found_again_when_the_answer_points_at_it(tmp_path):
    # sentences holding a word of the question fill the budget; the fact's sentence holds none of them
    near = " ".join(f"The benchmark mode {i} is listed here." for i in range(12))
    run = _run(tmp_path, "Timing elapsed: 3 seconds.", False, f"{near} Timing: 3 seconds elapsed.")
    (row,) = second_look.excerpt_rows(run, None, budget=10)
    assert not row["shown_holds"] and row["second_holds"]


def test_a_run_that_was_not_scored_is_refused(tmp_path, capsys):
    (tmp_path / "predictions.jsonl").write_text("", encoding="utf-8")
    assert second_look.main(["excerpt", str(tmp_path), "--lexical"]) == 2
    assert "verdicts.jsonl" in capsys.readouterr().err


def test_the_yes_no_quote_is_judged_by_both_rankings(tmp_path):
    question = "Does the benchmark run for 3 seconds by default?"
    record = {"task_id": "zstd-6<::>2", "input": [{"speaker": "user", "text": question}],
              "contexts": [{"document_id": "d0", "text": f"{FACT} It can be changed."}],
              "predictions": [{"text": "Yes."}], "route": {"standalone_question": question}}  # fmt: skip
    (tmp_path / "predictions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "verdicts.jsonl").write_text(json.dumps({"task_id": "zstd-6<::>2"}) + "\n", encoding="utf-8")

    def embed(texts):  # the question and the fact's sentence alike, the other sentence apart
        return np.asarray([[1.0, 0.0] if "3 seconds" in t else [0.0, 1.0] for t in texts])

    (row,) = second_look.yes_no_rows(tmp_path, embed)
    assert row == {"task_id": "zstd-6<::>2", "cosine": True, "cosine+words": True}


def test_a_line_that_is_no_json_is_an_error_naming_its_file_and_line(tmp_path, capsys):
    _run(tmp_path, "It runs for 3 seconds.", True, FACT)
    with open(tmp_path / "predictions.jsonl", "a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    assert second_look.main(["excerpt", str(tmp_path), "--lexical"]) == 2
    assert "predictions.jsonl, line 2" in capsys.readouterr().err
