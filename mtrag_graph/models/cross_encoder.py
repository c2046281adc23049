"""The bundled cross-encoder reranker: the bundled MiniLM with its top layers trained here on MTRAG pairs.

Only the trained tensors ship (``mtrag_graph/data/cross_encoder/trained.safetensors``, float16, with its
card ``card.json``: data, command, hash, size; ``python -m research.reranker_fit`` reproduces them). At
first use, ``bundled_cross_encoder()`` writes a Hugging Face ``BertForSequenceClassification`` folder
(one logit) into the cache: the bundled all-MiniLM-L6-v2 weights with the trained tensors in place, its
tokenizer, a config. FlagEmbedding's ``FlagReranker`` (the ``cross-encoder`` reranker spec) loads it as
it loads any reranker folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from mtrag_graph.models.bundled import BundledModelError, cache_dir, minilm_path

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "data" / "cross_encoder"
MAX_LENGTH = 256  # word pieces of query and passage together, as trained (MiniLM was trained on 256)
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
_LOCK = threading.Lock()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def classifier_config() -> dict[str, Any]:
    """The bundled MiniLM's config as a one-logit sequence classifier."""
    config = json.loads((minilm_path() / "config.json").read_text(encoding="utf-8"))
    config.pop("_name_or_path", None)
    return {**config, "architectures": ["BertForSequenceClassification"], "num_labels": 1}


def base_state_dict() -> dict[str, Any]:
    """The bundled MiniLM's tensors named as in ``BertForSequenceClassification`` (``bert.`` prefix)."""
    from safetensors.torch import load_file  # noqa: PLC0415 - heavy (torch): only when the folder is built

    tensors = load_file(str(minilm_path() / "model.safetensors"))
    return {
        name if name.startswith("bert.") else f"bert.{name}": t
        for name, t in tensors.items()
        if not name.endswith("position_ids")  # a buffer older transformers saved; newer ones rebuild it
    }


def _card(folder: Path) -> dict[str, Any]:
    path = folder / "card.json"
    if not path.exists():
        raise BundledModelError(
            f"no cross-encoder card at {path}: train one with `python -m research.reranker_fit`"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def bundled_cross_encoder(trained: Path = BUNDLED_DIR) -> Path:
    """The cache folder of the bundled cross-encoder, written at first use (and verified against the
    card's hash of the trained tensors)."""
    card = _card(trained)
    weights = trained / "trained.safetensors"
    expected = card["trained.safetensors"]["sha256"]
    target = cache_dir() / f"cross-encoder-minilm-{expected[:16]}"
    with _LOCK:
        if (target / "model.safetensors").exists():
            return target
        actual = file_sha256(weights)
        if actual != expected:
            raise BundledModelError(f"{weights} has SHA-256 {actual}, its card says {expected}; reinstall")
        from safetensors.torch import load_file, save_file  # noqa: PLC0415 - heavy (torch): only when the folder is built

        state = base_state_dict()
        for name, tensor in load_file(str(weights)).items():
            state[name] = tensor.float()
        missing = {"classifier.weight", "classifier.bias"} - set(state)
        if missing:
            raise BundledModelError(f"{weights} lacks {sorted(missing)}")
        staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        try:
            save_file({k: v.contiguous() for k, v in state.items()}, str(staging / "model.safetensors"))
            (staging / "config.json").write_text(json.dumps(classifier_config(), indent=1), encoding="utf-8")
            for name in _TOKENIZER_FILES:
                if (minilm_path() / name).exists():
                    shutil.copy(minilm_path() / name, staging / name)
            tokenizer_config = json.loads((staging / "tokenizer_config.json").read_text(encoding="utf-8"))
            tokenizer_config["model_max_length"] = MAX_LENGTH
            (staging / "tokenizer_config.json").write_text(
                json.dumps(tokenizer_config, indent=1), encoding="utf-8"
            )
            shutil.copy(trained / "card.json", staging / "card.json")
            os.replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    return target
