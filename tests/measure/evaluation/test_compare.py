"""Paired bootstrap of the HM3 difference between two systems."""

from __future__ import annotations

import json

import pytest

from mtrag_graph.measure.evaluation.compare import (
    compare,
    judge_picks,
    paired_bootstrap_hm3,
    paired_bootstrap_mean,
    render_comparison,
    selector_overlap,
)


def _rows(values):
    return {f"t{i}": {"conditioned": {"rb_alg": v, "rb_llm": v, "rl_f": v}} for i, v in enumerate(values)}


def test_clearly_better_system_has_a_ci_above_zero():
    result = paired_bootstrap_hm3(_rows([0.2, 0.3, 0.25, 0.2] * 5), _rows([0.8, 0.9, 0.85, 0.8] * 5))
    assert result["delta"] == pytest.approx(0.6) and result["ci95"][0] > 0


def test_identical_systems_have_zero_difference():
    rows = _rows([0.1, 0.5, 0.9, 0.3])
    result = paired_bootstrap_hm3(rows, rows)
    assert result["delta"] == 0 and result["ci95"] == [0.0, 0.0]


def test_bootstrap_is_reproducible_with_its_fixed_seed():
    a, b = _rows([0.1, 0.5, 0.9, 0.3, 0.7]), _rows([0.2, 0.4, 0.8, 0.6, 0.7])
    assert paired_bootstrap_hm3(a, b) == paired_bootstrap_hm3(a, b)


def test_only_tasks_both_systems_hold_are_compared():
    a, b = _rows([0.5, 0.5, 0.5]), _rows([0.5, 0.5])
    assert paired_bootstrap_hm3(a, b)["n_tasks"] == 2


def test_comparison_reports_each_answerability_class_with_its_own_interval():
    def system(values, classes):
        rows = {
            f"t{i}": {"answerability": c, "conditioned": {"rb_alg": v, "rb_llm": v, "rl_f": v}}
            for i, (v, c) in enumerate(zip(values, classes, strict=True))
        }
        by_class = {c: {"n": classes.count(c), "hm3": None} for c in set(classes)}
        overall = {"n": len(rows), "hm3": None, "conditioned": dict.fromkeys(("rb_alg", "rb_llm", "rl_f"))}
        report = {"overall": overall, "by_answerability": by_class}
        return report, rows

    classes = ["ANSWERABLE", "UNANSWERABLE"] * 6
    base = system([0.5, 0.0] * 6, classes)
    better_on_unanswerable = system([0.5, 1.0] * 6, classes)
    result = compare({"ncl": base, "clarify": better_on_unanswerable})
    answerable = result["by_answerability"]["ANSWERABLE"][1]["vs_baseline"]
    unanswerable = result["by_answerability"]["UNANSWERABLE"][1]["vs_baseline"]
    assert answerable["n_tasks"] == unanswerable["n_tasks"] == 6
    assert answerable["delta"] == 0 and unanswerable["delta"] == pytest.approx(1.0)
    assert "| UNANSWERABLE | clarify | 6 |" in render_comparison(result)


def _scored(rouge, faithfulness):
    """Rows where a selector-shared score (RL_F^c = faithfulness) and an independent one (ROUGE-L) differ."""
    return {
        f"t{i}": {
            "answerability": "ANSWERABLE",
            "scores": {"rouge_l": r, "bert_rec": 0.5},
            "conditioned": {"rb_alg": r, "rb_llm": f, "rl_f": f},
        }
        for i, (r, f) in enumerate(zip(rouge, faithfulness, strict=True))
    }


def _report(rows, **config):
    overall = {"n": len(rows), "hm3": None, "conditioned": dict.fromkeys(("rb_alg", "rb_llm", "rl_f"))}
    return {"overall": overall, "by_answerability": {}, "config": config}, rows


def test_a_gain_only_on_selector_shared_scores_shows_no_gain_on_the_independent_ones():
    config = {"ratings": "fitted (reference-rating-v1)", "idk_method": "pattern"}
    base = _report(_scored([0.4, 0.5, 0.6] * 4, [0.5] * 12), **config)
    picked = _report(_scored([0.4, 0.5, 0.6] * 4, [0.9] * 12), **config, judge_picks={"answer-judge": 12})
    result = compare({"ncl": base, "duo": picked})
    duo = result["systems"][1]
    assert paired_bootstrap_hm3(base[1], picked[1])["delta"] > 0  # the judge-based HM3 rises
    assert duo["selector_independent"]["ROUGE-L"]["vs_baseline"]["delta"] == 0
    assert duo["selector_independent"]["ROUGE-L"]["vs_baseline"]["ci95"] == [0.0, 0.0]
    assert duo["selector_independent"]["ROUGE-L"]["mean"] == pytest.approx(0.5)
    assert duo["judge_picks"] == {"answer-judge": 12}


def test_the_independent_delta_is_a_mean_difference_with_an_interval():
    a, b = _scored([0.2] * 10, [0.5] * 10), _scored([0.5] * 10, [0.5] * 10)
    b["t0"]["scores"]["rouge_l"] = None  # a task without the score in one system is left out
    result = paired_bootstrap_mean(a, b, "rouge_l", "raw")
    assert result["n_tasks"] == 9 and result["delta"] == pytest.approx(0.3)
    assert result["ci95"][0] == pytest.approx(0.3)


def test_fitted_ratings_are_flagged_as_sharing_the_selector_inputs_and_llm_ratings_are_not():
    fitted = selector_overlap({"ratings": "fitted (reference-rating-v1)", "idk_method": "pattern"})
    assert fitted["RL_F^c"].startswith("yes") and fitted["RB_llm^c"].startswith("yes")
    assert fitted["HM3"].startswith("yes")
    assert fitted["ROUGE-L"].startswith("no") and fitted["Bert-Rec"].startswith("no")
    assert "refusal detector" in fitted["RB_alg^c"]
    llm = selector_overlap({"ratings": None, "idk_method": "judge"})
    assert all(v.startswith("no") for v in llm.values())


def test_the_comparison_report_marks_the_shared_columns_and_lists_the_independent_scores():
    config = {"ratings": "fitted (reference-rating-v1)", "idk_method": "pattern"}
    base = _report(_scored([0.5] * 6, [0.5] * 6), **config)
    picked = _report(_scored([0.5] * 6, [0.9] * 6), **config, judge_picks={"answer-judge": 4})
    text = render_comparison(compare({"ncl": base, "duo": picked}))
    assert "| system | n | HM3 † | RB_alg^c | RB_llm^c † | RL_F^c † |" in text
    assert "## Scores the candidate selector never saw" in text
    assert "`duo` 4 by answer-judge" in text and "`ncl` none" in text
    assert "| duo | 0.500 | 0.000 | [+0.000, +0.000] | 0.000 |" in text


def test_judge_picks_counts_the_answers_a_judge_chose(tmp_path):
    rows = [
        {"task_id": "a", "route": {"judgement": {"judge": "answer-judge (v1)", "chosen": 1}}},
        {"task_id": "b", "route": {"judgement": {"judge": "skipped", "chosen": 0}}},
        {"task_id": "c", "route": {"gate": "no"}},
        {"task_id": "d", "route": {"judgement": {"judge": "answer-judge (v1)", "chosen": 0}}},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert judge_picks(path) == {"answer-judge (v1)": 2}
