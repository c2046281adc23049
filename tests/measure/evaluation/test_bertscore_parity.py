"""BERTScore through the ``bert-score`` package agrees with the hand-written implementation it replaced.

The reference below is that implementation, kept here as the parity check: greedy cosine matching of
L2-normalised token vectors of one encoder layer, special tokens in the matrix but not in the averages.
"""

from __future__ import annotations

import numpy as np
import pytest

from mtrag_graph.measure.evaluation.bertscore import Baseline, BertScorer

TEXTS = [
    ("Paris is the capital of France.", "The capital of France is Paris."),
    ("You can visit the law library to do legal research.", "Yes, the law library is open to the public."),
    ("Bees dance to show where the flowers are.", "Honey bees perform a round dance when food is close."),
    ("I do not have specific information.", "The first child from egg donation was born in 1983."),
]


def reference_precision_recall(model_dir, layer, candidate, reference):
    import torch  # noqa: PLC0415 - measure extra (torch, transformers): the slow parity tests alone
    from transformers import AutoModel, AutoTokenizer  # noqa: PLC0415 - as above

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    limit = getattr(tokenizer, "model_max_length", 512)
    max_length = min(int(limit) if limit and limit < 100_000 else 512, 512)
    special = set(tokenizer.all_special_ids)

    def embed(text):
        encoded = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            states = model(**encoded, output_hidden_states=True).hidden_states[layer][0].float().numpy()
        states = states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-12)
        return states, np.array([t not in special for t in encoded["input_ids"][0].tolist()])

    cand, cand_counted = embed(candidate)
    ref, ref_counted = embed(reference)
    similarity = cand @ ref.T
    return (
        float(similarity.max(axis=1)[cand_counted].mean()),
        float(similarity.max(axis=0)[ref_counted].mean()),
    )


@pytest.fixture(scope="module")
def scorer():
    return BertScorer()


@pytest.mark.slow
@pytest.mark.parametrize("candidate, reference", TEXTS)
def test_bert_score_package_matches_the_hand_written_implementation(scorer, candidate, reference):
    expected = reference_precision_recall(scorer.model_dir, scorer.layer, candidate, reference)
    assert scorer.precision_recall(candidate, reference) == pytest.approx(expected, abs=1e-5)


@pytest.mark.slow
def test_an_inner_layer_matches_too():
    inner = BertScorer(layer=3)
    candidate, reference = TEXTS[1]
    expected = reference_precision_recall(inner.model_dir, 3, candidate, reference)
    assert inner.precision_recall(candidate, reference) == pytest.approx(expected, abs=1e-5)


@pytest.mark.slow
def test_k_precision_is_the_best_precision_over_the_passages(scorer):
    response = "Paris is the capital of France."
    passages = ["Bananas are yellow.", "The capital of France is Paris, on the Seine."]
    expected = max(scorer.precision_recall(response, p)[0] for p in passages)
    assert scorer.k_precision(response, passages) == pytest.approx(expected, abs=1e-6)
    assert scorer.k_precision(response, []) is None


@pytest.mark.slow
def test_baseline_rescaling_is_applied(tmp_path):
    n_layers = BertScorer().layer
    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.25,0.4\n" for i in range(n_layers + 1)))
    rescaled = BertScorer(layer=n_layers, baseline=Baseline.from_file(path, n_layers))
    raw = BertScorer(layer=n_layers)
    p, r = raw.precision_recall(*TEXTS[0])
    assert rescaled.precision_recall(*TEXTS[0]) == pytest.approx(
        ((p - 0.5) / 0.5, (r - 0.25) / 0.75), abs=1e-5
    )


@pytest.mark.slow
def test_empty_texts_score_zero(scorer):
    assert scorer.precision_recall("", "Paris.") == (0.0, 0.0)
