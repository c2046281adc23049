"""The tried clarify fit on MTRAG-UN turns (research.clarify_slice_features): its phrase and passage signals."""

import numpy as np
import pytest

from research.clarify_slice_features import FEATURES, load_slice_model, new_phrases, slice_features


class _Embedder:
    """Each text's vector: unit vectors keyed by the text's first word, so equal openings are equal."""

    def embed(self, texts):
        vectors = []
        for text in texts:
            seed = sum(ord(c) for c in (text.split() or [""])[0])
            vector = np.random.default_rng(seed).normal(size=8)
            vectors.append(vector / np.linalg.norm(vector))
        return np.array(vectors)


HISTORY = [
    {"speaker": "user", "text": "How do cells keep proteins inside?"},
    {"speaker": "agent", "text": "Through osmosis and the cell membrane."},
]


def test_a_phrase_the_conversation_never_named_is_new():
    assert new_phrases(HISTORY, "When was the famous basketball player born?") == [
        "famous basketball player born"
    ]


def test_a_phrase_the_conversation_named_is_not_new():
    assert new_phrases(HISTORY, "What does the membrane do?") == []


def test_features_without_passages_are_zero_on_the_passage_side():
    values = slice_features(
        HISTORY, "When was the famous basketball player born?", None, _Embedder(), rules=False
    )
    assert set(values) == set(FEATURES)
    assert values["has_passages"] == values["titles"] == values["passage_spread"] == 0.0
    assert values["new_phrase"] == 1.0 and values["first_turn"] == 0.0


def test_passages_about_different_things_spread_more_than_copies():
    same = [{"title": "A", "text": "LeBron James was born in 1984."}] * 3
    different = [
        {"title": "A", "text": "LeBron James was born in 1984."},
        {"title": "B", "text": "Pete Maravich was born in 1947."},
        {"title": "C", "text": "Kobe Bryant was born in 1978."},
    ]
    question = "When was the famous basketball player born?"
    copies = slice_features(HISTORY, question, same, _Embedder(), rules=False)
    spread = slice_features(HISTORY, question, different, _Embedder(), rules=False)
    assert copies["passage_spread"] == pytest.approx(0.0, abs=1e-9)
    assert spread["passage_spread"] > 0.1
    assert spread["titles"] > copies["titles"]


def test_a_model_with_an_unknown_feature_is_refused(tmp_path):
    text = '{"embedder": "minilm", "features": ["length"], "mean": [0], "scale": [1], "coef": [1], "intercept": 0, "threshold": 0.5}'
    (tmp_path / "model.json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="clarify slice model: unknown features"):
        load_slice_model(tmp_path / "model.json")
