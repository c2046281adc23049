from __future__ import annotations

import json
import math

import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.measure.decisions import sets
from mtrag_graph.measure.decisions.run import grounded_state
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.nodes import answerability_gate as gate
from mtrag_graph.testing import fake_context, make_task
from research.fit_gate import fit_gate_classifier
from research.fit_gate import main as fit_gate_main
from tests.measure.decisions.conftest import fake_retriever, task


def test_evidence_overlap_counts_the_question_words_that_carry_content():
    passages = [{"text": "Bees dance near flowers."}]
    features = gate.evidence_features(
        "Can you tell me why the bees dance for roses?", passages, fake_context()
    )
    assert features["overlap_max"] == pytest.approx(2 / 3)  # "bees" and "dance" of "bees", "dance", "roses"


def test_evidence_features_measure_overlap_with_the_best_passage_and_all_passages():
    passages = [{"text": "Bees dance near flowers."}, {"text": "Wasps sting."}]
    features = gate.evidence_features("Why do bees dance and wasps sting?", passages, fake_context())
    assert features["overlap_max"] == pytest.approx(2 / 4)
    assert features["overlap_all"] == pytest.approx(4 / 4)
    assert -1.0 <= features["cos_mean"] <= features["cos_max"] <= 1.0


def test_evidence_features_without_passages_are_zero():
    assert set(gate.evidence_features("Why?", [], fake_context()).values()) == {0.0}


def classifier(features=("overlap_max",), threshold=0.5):
    return gate.GateClassifier(
        features=features, mean=(0.5,) * len(features), scale=(0.25,) * len(features),
        coef=(4.0,) * len(features), intercept=0.0, threshold=threshold,
    )  # fmt: skip


def test_classifier_probability_is_a_standardised_logistic():
    model = classifier()
    assert model.probability({"overlap_max": 0.5}) == pytest.approx(0.5)
    assert model.probability({"overlap_max": 0.75}) == pytest.approx(1 / (1 + math.exp(-4)))


def test_classifier_round_trips_through_its_json_file(tmp_path):
    path = tmp_path / "gate.json"
    classifier().save(path)
    assert gate.load_classifier(str(path)) == classifier()


def test_the_shipped_classifier_loads():
    shipped = gate.load_classifier("default")
    assert shipped.features and 0.0 <= shipped.threshold <= 1.0
    assert len(shipped.coef) == len(shipped.features) == len(shipped.mean) == len(shipped.scale)


def test_a_model_free_classifier_decides_without_calling_the_gate_model(tmp_path, tasks):
    path = tmp_path / "gate.json"
    classifier().save(path)
    model = ScriptedChatModel(responses=["yes"])
    context = fake_context(gate_model=model)
    context.gate_classifier = str(path)  # type: ignore[attr-defined]
    item = sets.gate_items(tasks, fake_retriever)[0]  # "How do bees dance?" with "Bees do a round dance."
    result = gate.gate_decision(grounded_state(item), context)
    assert model.calls == []
    assert result["gate"] == "yes" and result["features"]["overlap_max"] == pytest.approx(1.0)


def test_fit_chooses_a_threshold_that_keeps_the_positives():
    results = [{"label": True, "features": {"overlap_max": 0.6 + i / 100}} for i in range(30)]
    results += [{"label": False, "features": {"overlap_max": 0.1 + i / 100}} for i in range(30)]
    results += [{"label": True, "features": {"overlap_max": 0.2}}]  # one hard positive
    model, summary = fit_gate_classifier(results, features=["overlap_max"], max_positive_loss=0.0)
    assert summary["positives"] == 31 and summary["negatives"] == 30
    assert model.probability({"overlap_max": 0.2}) >= model.threshold  # no positive turned away
    assert model.probability({"overlap_max": 0.7}) > model.probability({"overlap_max": 0.1})


def test_fit_refuses_results_without_features():
    with pytest.raises(ValueError, match="no features"):
        fit_gate_classifier([{"label": True}, {"label": False, "features": {"overlap_max": 0.1}}])


def test_the_graph_gate_uses_the_shipped_classifier_without_a_gate_model_call():

    context = fake_context(
        gate_classifier="default", generate=["Bees perform a round dance when flowers are near."]
    )
    task = make_task(
        ["How do bees dance when flowers are near?"], ["Bees perform a round dance when flowers are near."]
    )
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert context.gate_model.calls == []
    assert state["gate"] == "yes" and "score" in state["gate_evidence"]


def test_the_gate_classifier_is_rebuilt_from_its_card_command_with_a_full_card(tmp_path, monkeypatch):

    questions = ["How do bees dance?", "Where do bees live?", "What do bees make?", "Why do bees sting?"]
    rows = []
    for n, question in enumerate(questions):  # 4 conversations: 2 answerable turns and 1 unanswerable each
        word = question.split()[-1].rstrip("?")
        rows += [
            task(f"c{n}", 1, "ANSWERABLE", question, [f"Bees {word} in a well known way."]),
            task(f"c{n}", 2, "PARTIAL", f"And wasps, {word}?", [f"Wasps {word} too."]),
            task(f"c{n}", 3, "UNANSWERABLE", "What is the price of honey in 1900?", None),
        ]
    data = tmp_path / "data"
    (data / "tasks").mkdir(parents=True)
    (data / "tasks" / "mtrag_reference.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(
        "mtrag_graph.measure.decisions.retrieval.index_retriever", lambda index_dir: fake_retriever
    )
    model = tmp_path / "gate.json"
    argv = ["--data", str(data), "--split", "tuning", "--only", "evidence", "--index", "IDX",
            "--limit-per-kind", "6", "-o", str(tmp_path / "out"), "--embedder", "hashing:64",
            "--fit-gate", str(model), "--gate-features", "overlap_max", "overlap_all"]  # fmt: skip
    assert fit_gate_main(argv) == 0
    card = json.loads(model.read_text())["card"]
    assert card["command"] == (
        "python -m research.fit_gate --split tuning --only evidence --index INDEX --limit-per-kind 6 -o OUT "
        f"--fit-gate {model} --gate-features overlap_max overlap_all"
    )
    assert card["data"] == "tasks/mtrag_reference.jsonl" and card["split"].startswith("tuning")
    assert len(card["data_sha256"]) == len(card["set_sha256"]) == 64
    assert card["items"] == {"other_conversation": 4, "positive": 6, "unanswerable_retrieved": 4}
    assert card["positives"] == 6 and card["negatives"] == 8
    assert 0 <= card["cv_balanced_accuracy"] <= 1 and card["trained"][:2] == "20"
    assert gate.load_classifier(str(model)).card == card


def test_the_shipped_gate_classifier_carries_a_card_with_its_command():
    card = gate.load_classifier("default").card
    assert "--limit-per-kind 60" in card["command"] and card["split"].startswith("tuning")
    for key in ("trained", "data_sha256", "positives", "negatives", "cv_balanced_accuracy"):
        assert card[key] is not None
