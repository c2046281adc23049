"""Paired bootstrap of the HM3 difference between two systems."""

from __future__ import annotations

import pytest

from mtrag_graph.evaluation.compare import paired_bootstrap_hm3


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
    from mtrag_graph.evaluation.compare import compare, render_comparison

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
