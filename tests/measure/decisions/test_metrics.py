from __future__ import annotations

import pytest

from mtrag_graph.measure.decisions import metrics


def result(label, gate, declined=False, kind=None, domain="govt"):
    kind = kind or ("positive" if label else "unanswerable_retrieved")
    return {"label": label, "gate": gate, "declined": declined, "kind": kind, "domain": domain}


def test_positives_lost_counts_gate_no_and_generator_declines():
    results = [
        result(True, "yes"),
        result(True, "no"),
        result(True, "yes", declined=True),
        result(True, "yes"),
    ]
    scores = metrics.gate_scores(results + [result(False, "no")])
    assert scores["positives_lost"] == pytest.approx(0.5)
    assert scores["positives_gate_no"] == pytest.approx(0.25)
    assert scores["positives_declined"] == pytest.approx(0.25)


def test_a_negative_is_declined_by_the_gate_or_by_the_generator():
    negatives = [result(False, "no"), result(False, "yes", declined=True), result(False, "yes")]
    scores = metrics.gate_scores([result(True, "yes"), *negatives])
    assert scores["negatives_declined"] == pytest.approx(2 / 3)
    assert scores["negatives_gate_no"] == pytest.approx(1 / 3)


def test_balanced_accuracy_averages_kept_positives_and_declined_negatives():
    results = [result(True, "yes"), result(True, "no"), result(False, "no"), result(False, "no"),
               result(False, "yes"), result(False, "no")]  # fmt: skip
    assert metrics.gate_scores(results)["balanced_accuracy"] == pytest.approx((0.5 + 0.75) / 2)


def test_gate_only_balanced_accuracy_ignores_the_generator():
    results = [result(True, "yes", declined=True), result(False, "yes", declined=True)]
    scores = metrics.gate_scores(results)
    assert scores["gate_balanced_accuracy"] == pytest.approx(0.5)
    assert scores["balanced_accuracy"] == pytest.approx(0.5)


def test_negatives_declined_are_reported_per_kind():
    results = [result(True, "yes"), result(False, "no", kind="unanswerable_retrieved"),
               result(False, "yes", kind="other_conversation")]  # fmt: skip
    assert metrics.gate_scores(results)["negatives_declined_by_kind"] == {
        "other_conversation": 0.0,
        "unanswerable_retrieved": 1.0,
    }


def test_gate_report_splits_by_domain():
    report = metrics.gate_report([result(True, "yes", domain="fiqa"), result(False, "no", domain="govt")])
    assert set(report["by_domain"]) == {"fiqa", "govt"}
    assert report["by_domain"]["fiqa"]["balanced_accuracy"] is None  # no negatives there


def test_clarify_scores_recall_precision_and_false_clarification_per_class():
    results = [
        {"label": True, "clarify": True, "answerability": "UNDERSPECIFIED"},
        {"label": True, "clarify": False, "answerability": "UNDERSPECIFIED"},
        {"label": False, "clarify": True, "answerability": "ANSWERABLE"},
        {"label": False, "clarify": False, "answerability": "ANSWERABLE"},
        {"label": False, "clarify": False, "answerability": "ANSWERABLE"},
        {"label": False, "clarify": False, "answerability": "PARTIAL"},
    ]
    scores = metrics.clarify_scores(results)
    assert scores["recall"] == pytest.approx(0.5)
    assert scores["precision"] == pytest.approx(0.5)
    assert scores["false_clarification"] == {"ANSWERABLE": pytest.approx(1 / 3), "PARTIAL": 0.0}


def test_relation_agreement_is_new_topic_on_stand_alone_turns():
    results = [
        {"multi_turn": "N/A", "relation_class": 4},
        {"multi_turn": "N/A", "relation_class": 1},
        {"multi_turn": "Follow-up", "relation_class": 1},
    ]
    scores = metrics.relation_scores(results)
    assert scores["stand_alone_agreement"] == pytest.approx(0.5)
    assert scores["distribution"]["all"] == {"1": 2, "4": 1}
    assert scores["distribution"]["N/A"] == {"1": 1, "4": 1}


def test_best_threshold_keeps_the_allowed_share_of_positives():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
    labels = [True, True, True, False, False, True, False, False]
    threshold, balanced = metrics.best_threshold(scores, labels, max_positive_loss=0.0)
    assert threshold == 0.4  # the lowest positive: no positive lost
    assert balanced == pytest.approx((1 + 2 / 4) / 2)
    threshold, balanced = metrics.best_threshold(scores, labels, max_positive_loss=0.25)
    assert threshold == 0.7  # one positive of four may go: every negative is now declined
    assert balanced == pytest.approx((0.75 + 1) / 2)


def test_best_threshold_needs_both_labels():
    with pytest.raises(ValueError):
        metrics.best_threshold([0.1, 0.2], [True, True], max_positive_loss=0.05)


def test_negative_threshold_lets_at_most_the_allowed_share_fire():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    threshold = metrics.negative_threshold(scores, max_false_rate=0.1)
    assert sum(s >= threshold for s in scores) == 1
    assert sum(s >= metrics.negative_threshold(scores, 0.0) for s in scores) == 0


def test_unclear_probability_reads_the_clarify_evidence():
    assert metrics.unclear_probability({"evidence": "model: p_unclear=0.640"}) == 0.64
    assert metrics.unclear_probability({"evidence": "no determiner or pronoun"}) == 0.0
    assert metrics.unclear_probability({"evidence": "NONE"}) is None


def test_clarify_scores_give_each_signals_share_and_the_false_rate_on_answered_turns():
    results = [
        {"label": True, "answerability": "UNDERSPECIFIED", "clarify": True, "evidence": "rule: 'this x'"},
        {"label": True, "answerability": "UNDERSPECIFIED", "clarify": True, "evidence": "passages: 'the x'"},
        {"label": True, "answerability": "UNDERSPECIFIED", "clarify": False, "evidence": "none"},
        {"label": False, "answerability": "ANSWERABLE", "clarify": True, "evidence": "rule: 'this y'"},
        {"label": False, "answerability": "PARTIAL", "clarify": False, "evidence": "none"},
    ]
    scores = metrics.clarify_scores(results)
    assert scores["signal_share"] == {"passages": 1 / 3, "rule": 2 / 3}
    assert scores["false_on_answered"] == 0.5
