"""The gate-signal replay: its signals on made-up passages, its grouped comparison (no model), and the
cross-encoder's signals on the shipped weights."""

import random

import pytest

from mtrag_graph.context import Context
from research.gate_signals import CROSS_ENCODER_SETS, FEATURE_SETS, compare, cross_encoder_signals, signals

CONTEXT = Context(embedder="hashing:64")


PASSAGE = {"title": "Eiffel Tower", "text": "The Eiffel Tower was completed in 1889. It is in Paris."}
OTHER = {"title": "Tea", "text": "Tea is a drink made from leaves. Many people drink it daily."}


def test_signals_tell_the_passage_that_holds_the_answer():
    held = signals("When was the Eiffel Tower completed?", [PASSAGE], CONTEXT)
    missing = signals("When was the Eiffel Tower completed?", [OTHER], CONTEXT)
    assert set(held) >= set(FEATURE_SETS["all"])
    assert held["overlap_max"] == 1.0 and missing["overlap_max"] == 0.0
    assert held["type_in_best"] == 1.0 and missing["type_in_best"] == 0.0  # a "when" question, a year
    assert held["sent_cos_max"] > missing["sent_cos_max"]
    assert missing["missing_words"] == 3.0  # eiffel, tower, completed
    assert signals("Anything?", [], CONTEXT) == {}


def test_compare_reports_each_feature_set_by_kind():
    rng = random.Random(0)
    rows = []
    for n in range(120):
        kind = ("positive", "unanswerable_retrieved", "other_conversation")[n % 3]
        label = kind == "positive"
        base = 0.7 if label else 0.3
        features = {f: base + rng.uniform(-0.2, 0.2) for f in FEATURE_SETS["all"]}
        rows.append({"conversation_id": f"c{n % 10}", "kind": kind, "label": label, "features": features})
    table = compare(rows, {"shipped four": FEATURE_SETS["shipped four"]}, 0.02)
    line = table.splitlines()[-1]
    assert line.startswith("| shipped four | 1.000 |")
    assert "/40 | " in line and line.endswith("/40 |")


@pytest.mark.slow
def test_cross_encoder_signals_on_the_shipped_weights():
    # the real bundled cross-encoder, through FlagEmbedding: the passage holding the answer scores higher
    held = cross_encoder_signals("When was the Eiffel Tower completed?", [PASSAGE, OTHER])
    missing = cross_encoder_signals("When was the Eiffel Tower completed?", [OTHER])
    assert held["ce_max"] > missing["ce_max"]
    assert held["ce_max"] >= held["ce_mean"] >= 0.0 and held["ce_second"] <= held["ce_max"]
    assert missing["ce_second"] == missing["ce_max"]  # one passage: its score twice
    assert set(CROSS_ENCODER_SETS["shipped four + cross-encoder"]) >= {
        "ce_max",
        *FEATURE_SETS["shipped four"],
    }
