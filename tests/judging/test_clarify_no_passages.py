"""The clarify decision for turns without passages (judging/clarify_no_passages.py): strict parsing of
the fitted file, the arithmetic, how is_underspecified routes to it, and the shipped model on MiniLM."""

from __future__ import annotations

import json

import pytest

from mtrag_graph.judging.clarify_no_passages import (
    KNOWN_FEATURES,
    NoPassageModel,
    load_no_passage_model,
    parse_no_passage_model,
)
from mtrag_graph.judging.underspecified import SIGNALS, is_underspecified, reference_features
from mtrag_graph.testing import fake_context
from research.clarify_no_passages import FEATURES, WORDING

ROTH = [
    {"speaker": "user", "text": "How do I open a Roth IRA?"},
    {
        "speaker": "agent",
        "text": "You can open a Roth IRA at most brokers if your income is under the limit.",
    },
]


def _model(**changes: object) -> dict:
    data = {
        "embedder": "hashing:64",
        "features": ["pronoun", "first_turn"],
        "mean": [0.5, 0.5],
        "scale": [0.5, 0.5],
        "coef": [2.0, 1.0],
        "intercept": -1.0,
        "threshold": 0.6,
        "card": {},
    }
    return {**data, **changes}


def test_the_probability_is_the_logistic_of_the_standardised_features():
    model = parse_no_passage_model(json.dumps(_model()))
    # z = -1 + 2 * (1 - 0.5) / 0.5 + 1 * (0 - 0.5) / 0.5 = 0
    assert model.probability({"pronoun": 1.0, "first_turn": 0.0}) == pytest.approx(0.5)
    assert model.probability({"pronoun": 1.0, "first_turn": 1.0}) > model.threshold


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"features": ["pronoun", "shoe_size"]}, "unknown features ['shoe_size']"),
        ({"coef": [1.0]}, "2 features but lengths"),
        ({"scale": [0.5, 0.0]}, "every scale must be positive"),
    ],
)
def test_a_wrong_file_is_refused_with_what_is_wrong(changes, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_no_passage_model(json.dumps(_model(**changes)))


def test_a_file_round_trips_through_its_json():
    model = parse_no_passage_model(json.dumps(_model()))
    assert parse_no_passage_model(model.to_json()) == model


def test_a_model_without_cosines_embeds_nothing():
    model = parse_no_passage_model(json.dumps(_model(embedder="no-such-embedder")))
    assert model.values({"pronoun": 1.0, "first_turn": 1.0}, [], "When was it built?") == {
        "pronoun": 1.0,
        "first_turn": 1.0,
    }


def test_a_first_turn_pronoun_is_a_pronoun_on_a_first_turn():
    features = reference_features([], "When was it founded?")
    assert (
        features["pronoun"] == 1.0 and features["pronoun_first_turn"] == 1.0 and features["first_turn"] == 1.0
    )


NOT_ORPHAN = tuple(s for s in SIGNALS if s != "orphan")


def test_a_turn_without_passages_is_decided_by_the_file_and_says_so(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(_model()), encoding="utf-8")
    # the orphan signal (a first turn's pointer at nothing) would decide this turn before the model
    context = fake_context(clarify_no_passages=str(path), clarify_signals=NOT_ORPHAN)
    asked, evidence = is_underspecified([], "When was it built?", None, context)
    assert asked is True
    assert evidence[0].startswith("no-passages: p=0.881, threshold 0.600 (pronoun=1.00, first_turn=1.00)")
    # the same turn with passages goes to the signals
    passages = [{"document_id": "d1", "title": "Tower", "text": "The tower was built in 1889."}]
    assert not is_underspecified([], "When was it built?", passages, context)[1][0].startswith("no-passages")


def test_without_the_setting_a_turn_without_passages_is_not_asked():
    asked, evidence = is_underspecified(
        [], "When was it built?", None, fake_context(clarify_no_passages=None, clarify_signals=NOT_ORPHAN)
    )
    assert asked is False and not evidence[0].startswith("no-passages")


def test_the_shipped_file_reads_the_reference_features_and_its_card_names_the_command():
    model = load_no_passage_model("default")
    assert model.features == FEATURES and not set(WORDING) & set(model.features)
    assert set(model.features) <= set(KNOWN_FEATURES)
    assert model.card["command"].startswith("python -m research.clarify_no_passages")
    assert model.card["false_alarm_target"] == 0.03


@pytest.mark.slow
def test_the_shipped_model_asks_about_an_it_off_the_topic_and_not_about_one_on_it():
    """The real path: the bundled MiniLM's cosines with the last exchange."""
    model: NoPassageModel = load_no_passage_model("default")
    context = fake_context(clarify_no_passages="default")
    off_topic = is_underspecified(ROTH, "How can we enhance its performance?", None, context)
    on_topic = is_underspecified(ROTH, "What is the income limit for it?", None, context)
    first_turn = is_underspecified([], "When was it built?", None, context)
    named = is_underspecified([], "What is the capital of France?", None, context)
    assert off_topic[0] is True and first_turn[0] is True
    assert on_topic[0] is False and named[0] is False
    assert f"threshold {model.threshold:.3f}" in off_topic[1][0]
