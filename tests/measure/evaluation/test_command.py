"""``mtrag-graph evaluate`` end to end with a scripted judge and no BERTScore (fast)."""

from __future__ import annotations

import json

import pytest

from mtrag_graph.cli import main
from mtrag_graph.measure.evaluation.inputs import LabelError, load_items


def _task(task_id, answerability="ANSWERABLE", prediction="Paris is the capital.", **extra):
    row = {
        "task_id": task_id,
        "Collection": "mt-rag-clapnq-elser-512-100-20240503",
        "input": [{"speaker": "user", "text": "What is the capital of France?"}],
        "contexts": [{"document_id": "d1", "text": "Paris is the capital of France."}],
        "targets": [{"speaker": "agent", "text": "The capital of France is Paris."}],
        "answerability": [answerability],
        "predictions": [{"text": prediction}],
    }
    row.update(extra)
    return row


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_malformed_rows_are_reported_and_skipped(tmp_path):
    path = _write(
        tmp_path / "p.jsonl",
        [
            _task("a::1"),
            "{not json",
            _task("b::1", predictions=[{"txt": "x"}]),
        ],
    )
    items, issues = load_items(path)
    assert [i.task_id for i in items] == ["a::1"]
    assert [(i.line, i.field) for i in issues] == [(2, "<row>"), (3, "predictions[0].text")]


def test_a_row_without_an_answerability_label_stops_loading_naming_the_task_and_field(tmp_path):
    row = _task("b::1")
    del row["answerability"]
    path = _write(tmp_path / "p.jsonl", [_task("a::1"), row])
    with pytest.raises(LabelError, match=r"task b::1: field 'answerability': missing.*p.jsonl:2"):
        load_items(path)


def test_an_unknown_answerability_label_stops_loading(tmp_path):
    with pytest.raises(LabelError, match=r"task c::1: field 'answerability': must be one of .*'X'"):
        load_items(_write(tmp_path / "p.jsonl", [_task("c::1", answerability="X")]))


def test_evaluate_fails_on_a_missing_label_and_names_it(tmp_path, capsys):
    row = _task("b::1")
    del row["answerability"]
    preds = _write(tmp_path / "p.jsonl", [_task("a::1"), row])
    code = main(["evaluate", str(preds), "-o", str(tmp_path / "r"), "--metrics", "rouge", "--no-progress"])
    assert code == 2
    assert "task b::1: field 'answerability': missing" in capsys.readouterr().err
    assert not (tmp_path / "r" / "report.json").exists()


def test_targets_and_answerability_come_from_the_tasks_file(tmp_path):
    tasks = _write(tmp_path / "t.jsonl", [_task("a<::>1", answerability="PARTIAL")])
    preds = _write(tmp_path / "p.jsonl", [{"task_id": "a::1", "predictions": [{"text": "Paris."}]}])
    items, issues = load_items(preds, tasks)
    assert issues == []
    assert (items[0].answerability, items[0].target) == ("PARTIAL", "The capital of France is Paris.")


def test_capitalised_answerability_key_is_accepted(tmp_path):
    row = _task("a::1", answerability="UNANSWERABLE")
    row["Answerability"] = row.pop("answerability")
    items, _ = load_items(_write(tmp_path / "p.jsonl", [row]))
    assert items[0].answerability == "UNANSWERABLE"


def test_capitalised_answerability_key_in_the_tasks_file_is_accepted(tmp_path):
    task = _task("a<::>1", answerability="UNANSWERABLE")
    task["Answerability"] = task.pop("answerability")
    tasks = _write(tmp_path / "t.jsonl", [task])
    preds = _write(tmp_path / "p.jsonl", [{"task_id": "a::1", "predictions": [{"text": "I don't know."}]}])
    items, issues = load_items(preds, tasks)
    assert issues == [] and items[0].answerability == "UNANSWERABLE"


def test_an_empty_lower_case_label_does_not_hide_the_capitalised_one(tmp_path):
    row = _task("a::1", answerability="PARTIAL")
    row["Answerability"], row["answerability"] = row["answerability"], []
    items, _ = load_items(_write(tmp_path / "p.jsonl", [row]))
    assert items[0].answerability == "PARTIAL"


def test_the_capitalised_label_conditions_the_idk_verdict_end_to_end(tmp_path):
    # upstream's scorer once skipped the IDK conditioning for this spelling (mt-rag-benchmark #23)
    row = _task("a::1", answerability="UNANSWERABLE", prediction="I do not have that information.")
    row["Answerability"] = row.pop("answerability")
    out = tmp_path / "r"
    preds = _write(tmp_path / "p.jsonl", [row])
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "rouge,idk", "--no-progress"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["by_answerability"]["UNANSWERABLE"]["n"] == 1
    row = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
    assert row["answerability"] == "UNANSWERABLE" and row["scores"]["idk"] == 1.0


def test_rouge_only_run_needs_no_judge_and_writes_the_report(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1"), _task("b::1", answerability="UNANSWERABLE")])
    out = tmp_path / "report"
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "rouge", "--no-progress"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["judge"] is None and report["n_tasks"] == 2
    assert (out / "report.md").is_file() and (out / "hm3_by_answerability.png").stat().st_size > 0


def _judged_run(preds, out, judge):
    return main(
        [
            "evaluate",
            str(preds),
            "-o",
            str(out),
            "--metrics",
            "rouge,idk,clarify,rb_llm,rl_f",
            "--judge",
            judge,
            "--idk-method",
            "judge",
            "--no-judge-cache",
            "--no-progress",
        ]
    )


def test_judged_run_reports_hm3_per_answerability_class(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1")])
    assert (
        _judged_run(preds, tmp_path / "r", "scripted:answers|1. Paris is the capital.|Rating: [[8]]|yes") == 0
    )
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    answerable = report["by_answerability"]["ANSWERABLE"]
    assert answerable["conditioned"]["rb_llm"] == 0.8 and answerable["conditioned"]["rl_f"] == 1.0
    assert "warnings" in report and "not the official one" in report["warnings"][0]


def test_rerun_reuses_the_stored_per_task_scores(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1")])
    spec = "scripted:answers|1. Paris is the capital.|Rating: [[8]]|yes|Rating: [[2]]"
    _judged_run(preds, tmp_path / "r", spec)
    _judged_run(preds, tmp_path / "r", spec)  # the same fake would now rate 2: only a stored row keeps 8
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["reused_rows"] == 1 and report["overall"]["conditioned"]["rb_llm"] == 0.8
    assert len((tmp_path / "r" / "scores.jsonl").read_text().splitlines()) == 1


def test_rerun_with_another_judge_rescores(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1")])
    _judged_run(preds, tmp_path / "r", "scripted:answers|1. Paris is the capital.|Rating: [[8]]|yes")
    _judged_run(preds, tmp_path / "r", "scripted:answers|1. Paris is the capital.|Rating: [[2]]|yes")
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["reused_rows"] == 0 and report["overall"]["conditioned"]["rb_llm"] == 0.2


def test_compare_puts_systems_side_by_side_with_a_bootstrap_ci(tmp_path):
    a = _write(tmp_path / "a.jsonl", [_task(f"t::{i}") for i in range(5)])
    b = _write(tmp_path / "b.jsonl", [_task(f"t::{i}", prediction="No idea.") for i in range(5)])
    out = tmp_path / "cmp"
    code = main(
        [
            "evaluate",
            "--compare",
            str(a),
            str(b),
            "-o",
            str(out),
            "--metrics",
            "rouge,idk,rb_llm,rl_f",
            "--judge",
            "scripted:answers|1. A.|Rating: [[6]]|yes",
            "--idk-method",
            "judge",
            "--no-judge-cache",
            "--no-progress",
        ]
    )
    assert code == 0
    result = json.loads((out / "compare.json").read_text())
    assert [s["name"] for s in result["systems"]] == ["a", "b"]
    assert result["systems"][1]["vs_baseline"]["n_tasks"] == 5
    assert result["systems"][1]["selector_independent"]["ROUGE-L"]["vs_baseline"]["n_tasks"] == 5
    assert result["shares_selector_inputs"]["RL_F^c"].startswith("no")  # LLM-judged: not the selector's
    text = (out / "compare.md").read_text()
    assert "ΔHM3" in text and "## Scores the candidate selector never saw" in text


def test_unknown_metric_is_a_usage_error(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1")])
    assert main(["evaluate", str(preds), "-o", str(tmp_path / "r"), "--metrics", "rouge,bleu"]) == 2


def test_a_scores_line_torn_by_an_interrupted_run_is_cut_off_and_redone(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [_task("a::1"), _task("b::1")])
    out = tmp_path / "r"
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "rouge", "--no-progress"]) == 0
    scores = out / "scores.jsonl"
    first = scores.read_text().splitlines()[0]
    scores.write_text(first + "\n" + '{"task_id": "b::1", "scor')
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "rouge", "--no-progress"]) == 0
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [row["task_id"] for row in rows] == ["a::1", "b::1"]


def test_the_default_idk_verdict_needs_no_judge_model(tmp_path):
    preds = _write(
        tmp_path / "p.jsonl", [_task("a::1"), _task("b::1", prediction="I do not have that information.")]
    )
    out = tmp_path / "r"
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "rouge,idk", "--no-progress"]) == 0
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert [r["scores"]["idk"] for r in rows] == [0.0, 1.0]
    assert rows[0]["judge"] is None and rows[0]["idk_method"] == "pattern"


def test_a_row_whose_response_changed_is_rescored_not_reused(tmp_path):
    out = tmp_path / "r"
    args = ["-o", str(out), "--metrics", "rouge", "--no-progress"]
    assert (
        main(["evaluate", str(_write(tmp_path / "a.jsonl", [_task("a::1", prediction="Paris.")])), *args])
        == 0
    )
    edited = _write(tmp_path / "b.jsonl", [_task("a::1", prediction="The capital of France is Paris.")])
    assert main(["evaluate", str(edited), *args]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["reused_rows"] == 0 and report["overall"]["raw"]["rouge_l"] == 1.0


def test_citations_are_scored_against_the_support_of_the_cited_passage_alone(tmp_path):
    good = [{"text": "Paris is the capital.", "supported": True, "passages": [0], "document_ids": ["d1"],
             "score": 1.0}]  # fmt: skip
    wrong = [{"text": "Paris is the capital.", "supported": True, "passages": [1], "document_ids": ["d2"],
              "score": 1.0}]  # fmt: skip
    contexts = [{"document_id": "d1", "text": "Paris is the capital of France."},
                {"document_id": "d2", "text": "Lyon lies on the Rhone."}]  # fmt: skip
    rows = [
        _task("t1", contexts=contexts, predictions=[{"text": "Paris is the capital.", "citations": good}]),
        _task("t2", contexts=contexts, predictions=[{"text": "Paris is the capital.", "citations": wrong}]),
        _task("t3", contexts=contexts, prediction="Bananas are yellow."),  # no citations: computed
    ]
    preds, out = _write(tmp_path / "p.jsonl", rows), tmp_path / "r"
    assert main(["evaluate", str(preds), "-o", str(out), "--metrics", "citations", "--no-progress"]) == 0
    scores = {
        r["task_id"]: r["scores"] for r in map(json.loads, (out / "scores.jsonl").read_text().splitlines())
    }
    mine = {t: {k: s[k] for k in ("citation_precision", "cited_share")} for t, s in scores.items()}
    assert mine["t1"] == {"citation_precision": 1.0, "cited_share": 1.0}
    assert mine["t2"] == {"citation_precision": 0.0, "cited_share": 1.0}
    assert mine["t3"] == {"citation_precision": None, "cited_share": 0.0}
    assert "citation precision: 0.500" in (out / "report.md").read_text()
