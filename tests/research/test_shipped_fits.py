"""The fits the product loads are rebuilt from their inputs and give the same numbers.

The shipped gate classifier (mtrag_graph/data/gate_classifier.json) is fitted on the evidence features
of the tuning split's gate set (research/data/gate_evidence_tuning.jsonl, whose SHA-256 its card holds:
numbers only, no benchmark text). Refitted from that table with the card's settings, it must be the
shipped classifier (to 1e-6: the table's features were recomputed, and MiniLM's vectors move in the
eighth digit between runs).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from importlib import resources
from pathlib import Path

import pytest

from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.prompts.excerpts import EVIDENCE_TOKENS
from mtrag_graph.stages.accept import DEFAULT_MIN_SUPPORT
from research import grounding_fit
from research.evidence_budget import BUDGETS, RULE_KEPT
from research.fit_gate import fit_gate_classifier
from tests.conftest import mtrag_data_path

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_gate_classifier_is_refitted_from_its_evidence_table():
    shipped = json.loads((resources.files("mtrag_graph") / "data" / "gate_classifier.json").read_text())
    card = shipped["card"]
    table = REPO / card["evidence_file"]
    assert hashlib.sha256(table.read_bytes()).hexdigest() == card["evidence_sha256"]
    results = [json.loads(line) for line in table.read_text().splitlines()]
    command = shlex.split(card["command"])
    after = command[command.index("--gate-features") + 1 :]
    features = after[: next((i for i, a in enumerate(after) if a.startswith("--")), len(after))]
    classifier, summary = fit_gate_classifier(results, features=features, trained_on=shipped["trained_on"])
    assert list(classifier.features) == shipped["features"]
    for key in ("mean", "scale", "coef"):
        assert list(getattr(classifier, key)) == pytest.approx(shipped[key], abs=1e-6)
    assert classifier.intercept == pytest.approx(shipped["intercept"], abs=1e-6)
    assert classifier.threshold == pytest.approx(shipped["threshold"], abs=1e-6)
    assert summary["cv_balanced_accuracy"] == pytest.approx(card["cv_balanced_accuracy"], abs=1e-9)
    assert (summary["positives"], summary["negatives"]) == (card["positives"], card["negatives"])


def test_the_grounding_threshold_is_chosen_again_from_the_tuning_split():
    card = json.loads((REPO / "research" / "data" / "grounding_threshold.json").read_text(encoding="utf-8"))
    data = mtrag_data_path()
    assert hashlib.sha256((data / card["data"]).read_bytes()).hexdigest() == card["data_sha256"]
    sample = grounding_fit.sample_tasks(load_split(str(data), "tuning"), seed=0, limit=100)
    table = grounding_fit.threshold_table(grounding_fit.support_rows(sample))
    for rebuilt, carded in zip(table, card["table"], strict=True):
        assert rebuilt["threshold"] == carded["threshold"]
        assert rebuilt["positives_lost"] == pytest.approx(carded["positives_lost"], abs=1e-4)
        assert rebuilt["positives_with_a_sentence_dropped"] == pytest.approx(
            carded["positives_with_a_sentence_dropped"], abs=1e-4
        )
    chosen = grounding_fit.choose(table, card["max_loss"], card["max_dropped"])
    assert chosen is not None and chosen["threshold"] == card["value"] == DEFAULT_MIN_SUPPORT


def test_the_evidence_budget_is_the_one_its_rule_chose_on_the_real_documents_tuning_split():
    card = json.loads((REPO / "research" / "data" / "evidence_keyfacts.json").read_text(encoding="utf-8"))
    share = {int(b): r["kept"] / r["cases"] for b, r in card["rows"].items() if b != "whole"}
    assert card["chosen"] == EVIDENCE_TOKENS
    assert share[EVIDENCE_TOKENS] >= card["rule_share"]
    assert all(share[b] < card["rule_share"] for b in share if b < EVIDENCE_TOKENS)


def test_the_mtrag_evidence_card_says_what_the_budget_keeps_there():
    # MTRAG's reference answers draw on more of their passages than a real-documents key fact: the card
    # keeps what each budget holds of them (its own rule, 95% of the answer's words, would pick 800)
    card = json.loads((REPO / "research" / "data" / "evidence_budget.json").read_text(encoding="utf-8"))
    kept = {b: card["embedding"][str(b)]["kept_mean"] for b in BUDGETS}
    assert card["chosen"] == min(b for b in BUDGETS if kept[b] >= RULE_KEPT)
    assert kept[250] < kept[400] < kept[card["chosen"]]


def test_the_shipped_exemplars_carry_a_card_of_the_tuning_data_they_come_from(mtrag_data):
    shipped = json.loads(
        (resources.files("mtrag_graph") / "data" / "exemplars.json").read_text(encoding="utf-8")
    )
    card = shipped["card"]
    data = mtrag_data / card["data"]
    assert hashlib.sha256(data.read_bytes()).hexdigest() == card["data_sha256"]
    tasks = {t["task_id"]: t for t in map(json.loads, data.read_text(encoding="utf-8").splitlines())}
    for exemplar in shipped["exemplars"]:
        assert exemplar["task_id"] in tasks
        assert exemplar["question"].split()[:3] == tasks[exemplar["task_id"]]["input"][-1]["text"].split()[:3]
