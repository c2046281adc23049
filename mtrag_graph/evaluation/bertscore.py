"""BERTScore (precision / recall by greedy cosine matching of token embeddings), with a configurable encoder.

The official scorer uses ``microsoft/deberta-xlarge-mnli``, layer 40, baseline rescaling, no idf.
That model is not downloadable here, so the default encoder is the bundled MiniLM (last layer, no
baseline: raw cosine scores); point ``model_dir`` at a local copy of the official model, with
``layer=40`` and its baseline, to reproduce the official numbers.

As in ``bert_score``: special tokens take part in the similarity matrix but not in the average
(their idf weight is 0), texts are truncated to the encoder's maximum length, and a rescaled score
is ``(x - b) / (1 - b)``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OFFICIAL_ENCODER = "microsoft/deberta-xlarge-mnli"
OFFICIAL_LAYER = 40


@dataclass(frozen=True)
class Baseline:
    """Baseline values of one encoder layer, for rescaling (``bert_score``'s rescale_baseline files)."""

    precision: float
    recall: float

    @classmethod
    def from_file(cls, path: str | Path, layer: int) -> Baseline:
        """Read a ``bert_score`` baseline TSV/CSV (``LAYER,P,R,F`` rows) and pick ``layer``."""
        for line in Path(path).read_text(encoding="utf-8").splitlines()[1:]:
            fields = [f for f in line.replace("\t", ",").split(",") if f.strip()]
            if fields and int(float(fields[0])) == layer:
                return cls(precision=float(fields[1]), recall=float(fields[2]))
        raise ValueError(f"baseline file {path} has no row for layer {layer}")


class BertScorer:
    """Token-level BERTScore over a local transformers encoder folder (default: the bundled MiniLM)."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        layer: int | None = None,
        baseline: Baseline | None = None,
        cache_size: int = 2048,
    ):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.label = Path(model_dir).name if model_dir else "all-MiniLM-L6-v2 (bundled)"
        if model_dir is None:
            from mtrag_graph.models.bundled import minilm_path

            model_dir = minilm_path()
        self.model_dir = Path(model_dir)
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
        self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True).eval()
        n_layers = int(self._model.config.num_hidden_layers)
        self.layer = n_layers if layer is None else layer
        if not 0 <= self.layer <= n_layers:
            raise ValueError(f"layer {self.layer} out of range: {self.model_dir} has {n_layers} layers")
        self.baseline = baseline
        limit = getattr(self._tokenizer, "model_max_length", 512)
        self._max_length = min(int(limit) if limit and limit < 100_000 else 512, 512)
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()  # one text at a time through the tokenizer and the model

    @property
    def name(self) -> str:
        rescale = "baseline-rescaled" if self.baseline else "no rescaling"
        return f"{self.label} (layer {self.layer}, {rescale}, no idf)"

    @property
    def is_official(self) -> bool:
        return (
            self.model_dir.name == OFFICIAL_ENCODER.split("/")[-1]
            and self.layer == OFFICIAL_LAYER
            and bool(self.baseline)
        )

    def _embed(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """L2-normalised token vectors of ``text`` and a mask of the tokens that count in the average."""
        key = hashlib.sha1(text.encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        # a fast tokenizer called with truncation from two threads at once raises "Already borrowed"
        with self._model_lock, self._torch.no_grad():
            encoded = self._tokenizer(text, truncation=True, max_length=self._max_length, return_tensors="pt")
            output = self._model(**encoded, output_hidden_states=True)
        vectors = output.hidden_states[self.layer][0].float().numpy()
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        special = set(self._tokenizer.all_special_ids)
        counted = np.array([tid not in special for tid in encoded["input_ids"][0].tolist()])
        with self._lock:
            self._cache[key] = (vectors, counted)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vectors, counted

    def _rescale(self, value: float, base: float | None) -> float:
        return value if base is None else (value - base) / (1 - base)

    def precision_recall(self, candidate: str, reference: str) -> tuple[float, float]:
        """BERTScore (precision, recall) of ``candidate`` against ``reference``; 0 for an empty text."""
        cand, cand_counted = self._embed(candidate)
        ref, ref_counted = self._embed(reference)
        if not cand_counted.any() or not ref_counted.any():
            return 0.0, 0.0
        similarity = cand @ ref.T
        precision = float(similarity.max(axis=1)[cand_counted].mean())
        recall = float(similarity.max(axis=0)[ref_counted].mean())
        base_p = self.baseline.precision if self.baseline else None
        base_r = self.baseline.recall if self.baseline else None
        return self._rescale(precision, base_p), self._rescale(recall, base_r)

    def recall(self, response: str, target: str) -> float:
        """Bert-Rec: BERTScore recall of the response against the target answer."""
        return self.precision_recall(response, target)[1]

    def k_precision(self, response: str, passages: list[str]) -> float | None:
        """Bert-K-Prec: the best BERTScore precision of the response against a passage; None without any."""
        if not passages:
            return None
        return max(self.precision_recall(response, passage)[0] for passage in passages)
