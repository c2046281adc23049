"""The answer verifier: passage windows, scorer specs, the ground stage's routing on its score, and the
shipped weights themselves (slow)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from mtrag_graph.graph import build_graph
from mtrag_graph.judging.verifier import (
    WEIGHTS,
    get_verifier,
    load_head,
    passage_windows,
    quantize,
    weights_sha256,
)
from mtrag_graph.state import AbstainReason
from mtrag_graph.testing import fake_context, make_task
from mtrag_graph.text import words

ANTHEM = [
    "The national anthem has been played before NFL games since the Second World War.",
    "Players stand on the sideline while the national anthem is played before the game.",
]
ANSWER = "The national anthem has been played before NFL games since the Second World War."
GRAPH = build_graph(output="state")


def test_a_passage_that_fits_is_one_window():
    assert passage_windows("One two three. Four five.", size=10) == ["One two three. Four five."]


def test_a_long_passage_is_overlapping_windows_of_whole_sentences():
    text = "One two three. Four five six. Seven eight. Nine ten eleven twelve."
    windows = passage_windows(text, size=6)
    assert windows == ["One two three. Four five six.", "Four five six. Seven eight.",
                       "Seven eight. Nine ten eleven twelve."]  # fmt: skip
    assert all(len(words(w)) <= 6 for w in windows)


def test_a_sentence_longer_than_a_window_is_a_window_of_its_own():
    long = " ".join(["word"] * 12) + "."
    assert passage_windows(f"Short one. {long} Short two.", size=6) == ["Short one.", long, "Short two."]


def test_a_fixed_spec_scores_every_pair_alike():
    assert get_verifier("fixed:0.25")("any question", ["any passage"]) == 0.25


def test_an_unknown_spec_is_refused_by_name():
    with pytest.raises(ValueError, match="no-such-file"):
        get_verifier("no-such-file")


def _answered(**overrides):
    task = make_task(["When did the NFL start playing the anthem?"], ANTHEM)
    context = fake_context(grounding="facts", generate=[ANSWER], **overrides)
    return context, GRAPH.invoke({"task": task, "retrieve": False}, context=context)


def test_an_answer_the_verifier_finds_in_no_cited_passage_is_a_decline():
    context, state = _answered(verifier="fixed:0.1", verifier_threshold=0.5)
    assert state["abstain_reason"] == AbstainReason.NOT_STATED
    assert state["answer"] == context.idk_answer
    assert state["grounding"]["verifier"] == {"score": 0.1, "threshold": 0.5, "passages": 1, "kept": False}


def test_an_answer_the_verifier_finds_stated_stands():
    _, state = _answered(verifier="fixed:0.9", verifier_threshold=0.5)
    assert state["answer"] == ANSWER
    assert state["grounding"]["verifier"]["kept"]


def test_without_a_threshold_the_verifier_is_not_asked():
    _, state = _answered(verifier="fixed:0.1")
    assert state["answer"] == ANSWER
    assert "verifier" not in state["grounding"]


NFL = "The NFL is a professional league of 32 teams."
FOUNDED = "The league was founded in 1920 in Canton, Ohio."
STATED = "The national anthem has been played before NFL games since the Second World War."
NOT_STATED = "Players stand on the sideline while the band plays before the game."
QUESTION = "When did the NFL start playing the national anthem before games?"


@pytest.mark.slow
def test_the_shipped_verifier_scores_a_passage_stating_the_answer_above_one_that_does_not():
    assert WEIGHTS.is_file()
    score = get_verifier("bundled")
    assert score(QUESTION, [f"{NFL} {STATED} {FOUNDED}"]) > score(QUESTION, [f"{NFL} {NOT_STATED} {FOUNDED}"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="known weakness (docs/verifier.md): a one-sentence passage scores low "
                   "whatever it says; it trained on windows of about 120 words")  # fmt: skip
def test_the_shipped_verifier_scores_a_one_sentence_answer_above_a_one_sentence_non_answer():
    score = get_verifier("bundled")
    assert score(QUESTION, [STATED]) > 0.5 > score(QUESTION, [NOT_STATED])


def test_quantized_weights_load_close_to_the_trained_ones(tmp_path):
    trained = {"layer.weight": torch.randn(4, 8), "layer.bias": torch.randn(4)}
    path = tmp_path / "head.safetensors"
    save_file(quantize(trained), str(path))
    loaded = load_head(path)
    assert set(loaded) == set(trained)
    for name, tensor in trained.items():
        assert torch.allclose(loaded[name], tensor, atol=tensor.abs().max().item() / 100)


def test_the_shipped_weights_are_the_ones_their_card_names():
    card = json.loads((WEIGHTS.parent / "fit.json").read_text())
    assert card["weights"] == WEIGHTS.name
    assert card["bytes"] == WEIGHTS.stat().st_size
    assert card["sha256"] == weights_sha256(WEIGHTS)
