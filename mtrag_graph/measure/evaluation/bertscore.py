"""BERTScore (greedy cosine matching of token embeddings) through the ``bert-score`` package, local encoder.

The official scorer uses ``microsoft/deberta-xlarge-mnli``, layer 40, baseline rescaling, no idf.
That model is not downloadable here, so the default encoder is the bundled MiniLM (last layer, no
baseline: raw cosine scores); point ``model_dir`` at a local copy of the official model, with
``layer=40`` and its baseline file, to reproduce the official numbers. ``bert_score`` is given the
folder as its ``model_type`` and an explicit layer, so it never looks anything up on a hub; special
tokens take part in the similarity matrix but not in the average (idf weight 0), and a rescaled score
is ``(x - b) / (1 - b)``. ``tests/measure/evaluation/test_bertscore_parity.py`` checks it against the
hand-written implementation this module used before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from mtrag_graph import settings
from mtrag_graph.models.bundled import minilm_path

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
        batch_size: int = 16,
    ):
        settings.offline_hub()
        from bert_score import BERTScorer  # noqa: PLC0415 - measure extra (bert-score, torch): loaded when BERTScore is first computed
        from transformers import AutoConfig  # noqa: PLC0415 - as above

        self.label = Path(model_dir).name if model_dir else "all-MiniLM-L6-v2 (bundled)"
        if model_dir is None:
            model_dir = minilm_path()
        self.model_dir = Path(model_dir)
        n_layers = int(
            AutoConfig.from_pretrained(str(self.model_dir), local_files_only=True).num_hidden_layers
        )
        self.layer = n_layers if layer is None else layer
        if not 0 <= self.layer <= n_layers:
            raise ValueError(f"layer {self.layer} out of range: {self.model_dir} has {n_layers} layers")
        self.baseline = baseline
        self._scorer = BERTScorer(
            model_type=str(self.model_dir),
            num_layers=self.layer,
            batch_size=batch_size,
            idf=False,
            device="cpu",
            lang="en" if baseline else None,  # bert_score asks for a language whenever it rescales
            rescale_with_baseline=baseline is not None,
        )
        if baseline is not None:
            import torch  # noqa: PLC0415 - as above

            # the values of our layer's row, set directly: bert_score would read row ``num_layers`` of a
            # file by position and look for the file under the model's hub name otherwise (F is unused)
            self._scorer._baseline_vals = torch.tensor([baseline.precision, baseline.recall, 0.0])
        # one text batch at a time through the tokenizer and the model: a fast tokenizer called with
        # truncation from two threads at once raises "Already borrowed" (evaluate --concurrency)
        self._lock = threading.Lock()

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

    def _score(self, candidates: list[str], references: list[str]) -> list[tuple[float, float]]:
        with self._lock:
            precision, recall, _ = self._scorer.score(candidates, references, batch_size=len(candidates))
        return [(float(p), float(r)) for p, r in zip(precision.tolist(), recall.tolist(), strict=True)]

    def precision_recall(self, candidate: str, reference: str) -> tuple[float, float]:
        """BERTScore (precision, recall) of ``candidate`` against ``reference``; 0 for an empty text."""
        if not candidate.strip() or not reference.strip():
            return 0.0, 0.0
        return self._score([candidate], [reference])[0]

    def recall(self, response: str, target: str) -> float:
        """Bert-Rec: BERTScore recall of the response against the target answer."""
        return self.precision_recall(response, target)[1]

    def k_precision(self, response: str, passages: list[str]) -> float | None:
        """Bert-K-Prec: the best BERTScore precision of the response against a passage; None without any."""
        if not passages:
            return None
        if not response.strip():
            return 0.0
        present = [p for p in passages if p.strip()]
        if not present:
            return 0.0
        return max(p for p, _ in self._score([response] * len(present), present))
