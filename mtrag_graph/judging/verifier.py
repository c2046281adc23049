"""The answer verifier: the bundled MiniLM fine-tuned as a cross-encoder for "does this passage state the
answer to this question?" (0..1), trained by ``research/verifier_fit.py`` (card: ``docs/verifier.md``).

The shipped file holds only what training changed (the top encoder layers and a one-logit head over the
mean-pooled tokens; matrices int8 with a scale a row, the rest fp16); the rest is the bundled all-MiniLM-L6-v2, which the package already carries. A passage longer
than one window is scored window by window (``passage_windows``) and its best window counts, so the
sentence that states the answer is never cut off by the 256-token limit.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from mtrag_graph import settings
from mtrag_graph.text import sentences, words

WEIGHTS = Path(__file__).resolve().parent.parent / "data" / "verifier" / "verifier-head.safetensors"
MAX_LENGTH = 256
HEAD = "head."  # the head's tensors in the weights file; the rest are the encoder's trained layers
SCALE = ".scale"  # the row scales of an int8 matrix in the weights file
# a window of sentences fills up to this many words (about 200 word pieces: with a question it fits
# MAX_LENGTH); the next window starts halfway through the previous one
WINDOW_WORDS = 150

# (question, passages) -> the support score in 0..1; the context's fake goes in through Context.verifier
SupportScorer = Callable[[str, Sequence[str]], float]


def passage_windows(text: str, size: int = WINDOW_WORDS) -> list[str]:
    """``text`` as overlapping windows of whole sentences of at most ``size`` words (a longer sentence is
    a window of its own); one window when it fits."""
    parts = sentences(text) or [text]
    lengths = [len(words(s)) or 1 for s in parts]
    if sum(lengths) <= size:
        return [" ".join(parts)]
    windows: list[str] = []
    start = 0
    while start < len(parts):
        end, total = start, 0
        while end < len(parts) and (end == start or total + lengths[end] <= size):
            total += lengths[end]
            end += 1
        windows.append(" ".join(parts[start:end]))
        if end >= len(parts):
            break
        # the next window starts at the first sentence past half of this one's words
        seen, start_next = 0, end
        for i in range(start + 1, end):
            seen += lengths[i - 1]
            if seen >= total / 2:
                start_next = i
                break
        start = start_next
    return windows


def weights_sha256(path: Path = WEIGHTS) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Verifier:
    """The trained cross-encoder, on one thread unless told otherwise (it runs beside llama.cpp)."""

    def __init__(self, weights: Path = WEIGHTS, threads: int = 1):
        settings.offline_hub()
        import torch  # noqa: PLC0415 - heavy: loaded when the verifier is first used
        from transformers import AutoTokenizer  # noqa: PLC0415

        from mtrag_graph.models.bundled import minilm_path  # noqa: PLC0415

        self._torch = torch
        self._threads = threads
        base = str(minilm_path())
        self.tokenizer = AutoTokenizer.from_pretrained(base)
        self.encoder, self.head = load_network(base)
        trained = load_head(weights)
        head = {k.removeprefix(HEAD): v for k, v in trained.items() if k.startswith(HEAD)}
        layers = {k: v for k, v in trained.items() if not k.startswith(HEAD)}
        unknown = set(layers) - set(self.encoder.state_dict())
        if unknown or set(head) != {"weight", "bias"}:
            raise ValueError(f"{weights}: not verifier weights (unknown tensors: {sorted(unknown)[:5]})")
        self.encoder.load_state_dict(layers, strict=False)
        self.head.load_state_dict(head)
        self.encoder.eval()
        self._lock = threading.Lock()

    def pair_scores(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16) -> list[float]:
        """The probability that each (question, passage text) pair's passage states the answer; the text
        is truncated at ``MAX_LENGTH`` tokens (``support_score`` windows it first)."""
        torch = self._torch
        scores: list[float] = []
        with self._lock, torch.inference_mode():
            before = torch.get_num_threads()
            torch.set_num_threads(self._threads)
            try:
                for start in range(0, len(pairs), batch_size):
                    encoded = encode_pairs(self.tokenizer, pairs[start : start + batch_size])
                    hidden = self.encoder(**encoded).last_hidden_state
                    logits = self.head(mean_pool(hidden, encoded["attention_mask"])).squeeze(-1)
                    scores.extend(torch.sigmoid(logits).tolist())
            finally:
                torch.set_num_threads(before)
        return scores

    def support_score(self, question: str, passages: Sequence[str]) -> float:
        """The best window's score over all ``passages`` (0 with none)."""
        pairs = [(question, window) for text in passages if text.strip() for window in passage_windows(text)]
        return max(self.pair_scores(pairs), default=0.0)


def load_network(base: str) -> tuple[Any, Any]:
    """The bundled MiniLM encoder and an untrained one-logit head over its mean-pooled tokens (the pooling
    the model was trained with, so the head starts from meaningful features)."""
    import torch  # noqa: PLC0415
    from transformers import AutoModel  # noqa: PLC0415

    encoder = AutoModel.from_pretrained(base)
    return encoder, torch.nn.Linear(encoder.config.hidden_size, 1)


def mean_pool(hidden: Any, mask: Any) -> Any:
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def quantize(tensors: dict[str, Any]) -> dict[str, Any]:
    """Matrices as int8 rows with one fp16 scale a row (``<name>.scale``); the rest as fp16."""
    out = {}
    for name, tensor in tensors.items():
        if tensor.dim() == 2:
            scale = tensor.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
            out[name] = (tensor / scale).round().clamp(-127, 127).to(dtype=_int8()).contiguous()
            out[f"{name}{SCALE}"] = scale.half().contiguous()
        else:
            out[name] = tensor.half().contiguous()
    return out


def load_head(path: Path) -> dict[str, Any]:
    """The trained tensors of a weights file, as float32 (int8 matrices times their row scales)."""
    from safetensors.torch import load_file  # noqa: PLC0415

    stored = load_file(str(path))
    return {
        name: tensor.float() * stored[f"{name}{SCALE}"].float()
        if f"{name}{SCALE}" in stored
        else tensor.float()
        for name, tensor in stored.items()
        if not name.endswith(SCALE)
    }


def _int8() -> Any:
    import torch  # noqa: PLC0415

    return torch.int8


def encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    return tokenizer(
        [q for q, _ in pairs],
        [p for _, p in pairs],
        truncation="only_second",
        max_length=MAX_LENGTH,
        padding=True,
        return_tensors="pt",
    )


@lru_cache(maxsize=1)
def default_verifier() -> Verifier:
    """The shipped verifier, loaded once per process."""
    return Verifier()


def support_score(question: str, passages: Sequence[str]) -> float:
    """Whether any of ``passages`` states the answer to ``question``: the shipped verifier's best score."""
    return default_verifier().support_score(question, passages)


@lru_cache(maxsize=4)
def get_verifier(spec: str) -> SupportScorer:
    """The scorer a ``Context.verifier`` spec names: ``bundled`` (the shipped weights), a path to a
    ``verifier-head.safetensors`` file, or ``fixed:P`` (every pair scores P: a stand-in for tests)."""
    if spec == "bundled":
        return support_score
    if spec.startswith("fixed:"):
        value = float(spec.removeprefix("fixed:"))
        return lambda question, passages: value
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ValueError(f"verifier '{spec}': use 'bundled', 'fixed:P' or the path of a weights file")
    return Verifier(path).support_score
