"""The bundled cross-encoder: put together from the shipped trained tensors, loaded by FlagEmbedding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from FlagEmbedding import FlagReranker

from mtrag_graph.models import get_reranker
from mtrag_graph.models.bundled import BundledModelError
from mtrag_graph.models.cross_encoder import BUNDLED_DIR, bundled_cross_encoder, file_sha256

pytestmark = pytest.mark.slow

QUESTION = "How many teams are there in the NFL?"
RELEVANT = "The National Football League (NFL) is a professional American football league of 32 teams."
OTHER = "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen in plant leaves."


def test_the_card_states_data_command_hash_and_size() -> None:
    card = json.loads((BUNDLED_DIR / "card.json").read_text(encoding="utf-8"))
    weights = BUNDLED_DIR / "trained.safetensors"
    assert card["command"].startswith("python -m research.reranker_fit")
    assert card["trained.safetensors"]["sha256"] == file_sha256(weights)
    assert card["trained.safetensors"]["bytes"] == weights.stat().st_size
    assert card["data sha256 (first 16)"] and card["split"]


def test_flag_embedding_loads_the_bundled_folder_and_ranks_the_answer_first() -> None:
    folder = bundled_cross_encoder()
    assert (folder / "model.safetensors").exists() and (folder / "config.json").exists()
    reranker = FlagReranker(str(folder), use_fp16=False, devices="cpu")
    relevant, other = reranker.compute_score([[QUESTION, RELEVANT], [QUESTION, OTHER]], normalize=True)
    assert relevant > other
    # the graph's spec loads the same folder, through the same class
    scores = get_reranker("cross-encoder").score(QUESTION, [OTHER, RELEVANT])
    assert scores[1] > scores[0] and all(0.0 <= s <= 1.0 for s in scores)


def test_trained_tensors_that_do_not_match_their_card_are_refused(tmp_path: Path) -> None:
    trained = tmp_path / "cross_encoder"
    shutil.copytree(BUNDLED_DIR, trained)
    card = json.loads((trained / "card.json").read_text(encoding="utf-8"))
    card["trained.safetensors"]["sha256"] = "0" * 64
    (trained / "card.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(BundledModelError, match="card says"):
        bundled_cross_encoder(trained)
