"""The clarify classifier tried and not kept (research/clarify_classifier.py): its generated data, its
features, its file, and its fit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from research.clarify_classifier import (
    DEFAULT,
    ClarifyClassifier,
    ClarifyModel,
    classifier_row,
    feature_names,
    load_clarify_classifier,
    parse_classifier,
)
from research.clarify_data import broad_question, generated_set, passage_kind
from research.clarify_fit import fit_logistic, group_of, threshold_for

EMBEDDER = "hashing:16"


def _task(conversation: str, question: str, passage: str, title: str, label: str = "ANSWERABLE") -> dict:
    return {
        "task_id": f"{conversation}<::>2",
        "conversation_id": conversation,
        "Collection": "mt-rag-govt-elser-512-100-20240611",
        "input": [
            {"speaker": "user", "text": "What is open today?"},
            {"speaker": "agent", "text": "Several offices are open."},
            {"speaker": "user", "text": question},
        ],
        "contexts": []
        if label == "UNANSWERABLE"
        else [{"document_id": f"{conversation}-0", "title": title, "text": passage}],
        "answerability": [label],
        "targets": [{"speaker": "agent", "text": "gold"}],
    }


TASKS = [
    _task(f"c{i}", f"What services does the {place} VA Clinic offer?", f"{place} VA Clinic offers labs; the clinic is open.", f"{place} VA Clinic")
    for i, place in enumerate(["Causeway", "Hibbing", "Hayward", "Kaufman", "Tomah", "Salem", "Akron", "Dayton", "Eugene", "Fresno"])
] + [_task("u1", "Is the Moon made of cheese?", "", "", "UNANSWERABLE")]  # fmt: skip


def test_a_broad_question_is_cut_before_the_phrase_that_says_what_it_is_about():
    assert broad_question("What is the population of Israel?") == "What is the population?"


def test_a_question_with_nothing_after_its_head_is_not_made_broad():
    assert broad_question("What is the population?") is None


def test_a_kind_is_read_from_a_titles_bracket():
    assert passage_kind("Richard III", [{"title": "Richard III (play)", "text": "A history."}]) == "play"


def test_a_kind_is_read_from_what_the_passage_says_the_name_is():
    passage = {"title": "", "text": "Friends is an American television sitcom that aired on NBC."}
    assert passage_kind("Friends", [passage]) == "sitcom"


def test_a_held_out_conversation_gives_no_item_to_the_tuning_split():
    items = generated_set(TASKS, seed=0)
    splits: dict[str, set[str]] = {}
    for item in items:
        splits.setdefault(group_of(item), set()).add(item["clarify_item"]["split"])
    assert all(len(found) == 1 for found in splits.values())
    assert {"tuning", "held-out"} == {s for found in splits.values() for s in found}


def test_a_pair_loses_its_passages_for_both_twins_or_for_neither():
    items = [i for i in generated_set(TASKS, seed=3) if i["clarify_item"]["form"] != "natural"]
    for answerable, underspecified in zip(items[0::2], items[1::2], strict=True):
        assert answerable["twin"]["source"] == underspecified["twin"]["source"]
        assert bool(answerable["contexts"]) == bool(underspecified["contexts"])


def test_the_same_seed_gives_the_same_generated_set():
    assert generated_set(TASKS, seed=1) == generated_set(TASKS, seed=1)


def _classifier(passages_intercept: float, none_intercept: float) -> ClarifyClassifier:
    def model(setting: str, intercept: float) -> ClarifyModel:
        n = len(feature_names(setting, 16))
        return ClarifyModel(
            mean=(0.0,) * n, scale=(1.0,) * n, coef=(0.0,) * n, intercept=intercept, threshold=0.5
        )

    return ClarifyClassifier(
        embedder=EMBEDDER,
        models={"passages": model("passages", passages_intercept), "none": model("none", none_intercept)},
        card={},
    )


def test_a_turn_with_passages_gets_the_passage_features():
    classifier = _classifier(0.0, 0.0)
    passages = [{"title": "Hibbing VA Clinic", "text": "The clinic offers labs."}]
    with_passages = classifier_row([], "What does the clinic offer?", passages, classifier)
    assert len(with_passages) == len(feature_names("passages", 16))
    assert len(classifier_row([], "What does the clinic offer?", None, classifier)) == len(
        feature_names("none", 16)
    )


def test_a_turn_is_scored_by_the_model_of_its_setting(tmp_path):
    path = tmp_path / "classifier.json"
    path.write_text(_classifier(passages_intercept=-5.0, none_intercept=5.0).to_json())
    classifier = load_clarify_classifier(str(path))
    passages = [{"document_id": "d1", "title": "Hibbing VA Clinic", "text": "The clinic offers labs."}]
    without = classifier.probability(
        classifier_row([], "What does the clinic offer?", None, classifier), None
    )
    row = classifier_row([], "What does the clinic offer?", passages, classifier)
    assert without == pytest.approx(0.993, abs=1e-3) and without >= classifier.threshold(None)
    assert classifier.probability(row, passages) < classifier.threshold(passages)


def test_a_classifier_file_without_both_models_is_refused():
    text = json.dumps(
        {
            "embedder": EMBEDDER,
            "models": {"passages": json.loads(_classifier(0, 0).to_json())["models"]["passages"]},
        }
    )
    with pytest.raises(ValueError, match="'passages' and 'none'"):
        parse_classifier(text)


def test_logistic_fit_ranks_a_separable_set():
    x = np.array([[0.0], [0.1], [0.9], [1.0]])
    coef, intercept = fit_logistic(x, np.array([0.0, 0.0, 1.0, 1.0]), l2=0.1)
    assert coef[0] * 1.0 + intercept > 0 > coef[0] * 0.0 + intercept


def test_the_threshold_lets_at_most_the_allowed_share_of_negatives_be_asked():
    negatives = [i / 100 for i in range(100)]
    threshold = threshold_for(negatives, 0.02)
    assert sum(s >= threshold for s in negatives) == 2


def test_the_kept_classifier_reads_the_features_of_its_card_from_the_reference_tasks():
    classifier = parse_classifier(DEFAULT.read_text())
    assert (
        classifier.card["data_sha256"] == "e9c04be06127925434527897d10bbc2c8782b750588aaa23254163f5d1f581cd"
    )
    for setting, model in classifier.models.items():
        assert len(model.coef) == len(model.mean) == len(feature_names(setting, 384))


@pytest.mark.slow
def test_the_kept_classifier_asks_about_an_unnamed_it_and_not_about_a_named_university():
    classifier = load_clarify_classifier("default")
    vague = classifier.probability(classifier_row([], "When was it founded?", None, classifier), None)
    named_row = classifier_row([], "When was the University of Chicago founded?", None, classifier)
    assert vague >= classifier.threshold(None) > classifier.probability(named_row, None)
