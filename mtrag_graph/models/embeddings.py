"""Embedders and rerankers: the bundled MiniLM by default, local FlagEmbedding folders when configured.

Spec strings:
- ``minilm`` (default): the bundled all-MiniLM-L6-v2 through sentence-transformers (mean pooling).
- ``st:/path``: any sentence-transformers folder.
- ``flag:/path``: a FlagEmbedding ``FlagModel`` folder (e.g. bge-*-en-v1.5), mean pooling.
- ``bge-m3:/path``: a ``BGEM3FlagModel`` folder (dense vectors; sparse weights through ``lexical_weights``).
- ``hashing:DIM`` (``hashing:DIM+sparse``): no model: words hashed into ``DIM`` buckets, so texts that
  share words are similar (``+sparse`` adds the buckets as sparse weights). Fast and deterministic:
  for tests and dry runs.
Reranker specs: ``none`` (the passages keep their order, no model), ``embedding`` (cosine of the
embedder), ``lexical`` (word overlap, no model),
``cross-encoder`` (the bundled MiniLM trained here as a cross-encoder: ``models.cross_encoder``) and
``cross-encoder:/path`` (any reranker folder), both through FlagEmbedding's ``FlagReranker``, ``listwise`` / ``listwise:MODEL`` (a chat model orders the
passages: ``models.listwise``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from mtrag_graph import settings
from mtrag_graph.models.batching import CoalescingEncoder
from mtrag_graph.models.bundled import minilm_path
from mtrag_graph.models.cross_encoder import MAX_LENGTH, bundled_cross_encoder
from mtrag_graph.models.listwise import ListwiseReranker
from mtrag_graph.text import words

_CACHE_SIZE = 50_000


class Embedder:
    """Encodes texts into L2-normalised float32 rows; repeated texts are served from a cache."""

    def __init__(
        self,
        name: str,
        encode: Callable[[list[str]], np.ndarray],
        batch_size: int = 32,
        encode_sparse: Callable[[list[str]], list[dict[str, float]]] | None = None,
    ):
        self.name = name
        self._encode = encode
        self._encode_sparse = encode_sparse
        self._batch_size = batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.dim = int(self._encode(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._cache]
        if missing:
            todo = [texts[i] for i in missing]
            vectors = []
            steps = range(0, len(todo), self._batch_size)
            if show_progress:
                steps = tqdm(steps, desc=f"embedding ({self.name})", unit="batch")
            for start in steps:
                vectors.append(self._encode(todo[start : start + self._batch_size]))
            new = _normalise(np.concatenate(vectors))
            with self._lock:
                for i, vector in zip(missing, new, strict=True):
                    self._cache[keys[i]] = vector
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        with self._lock:
            return np.stack([self._cache[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)

    @property
    def has_sparse(self) -> bool:
        """Whether the model also gives lexical (sparse) weights, as BGE-M3 does."""
        return self._encode_sparse is not None

    def embed_sparse(self, texts: Sequence[str], show_progress: bool = False) -> list[dict[str, float]]:
        """One ``{token id: weight}`` dict per text (not cached: used once, when indexing)."""
        if self._encode_sparse is None:
            raise ValueError(f"embedder '{self.name}' has no sparse weights")
        steps = range(0, len(texts), self._batch_size)
        if show_progress:
            steps = tqdm(steps, desc=f"sparse weights ({self.name})", unit="batch")
        weights: list[dict[str, float]] = []
        for start in steps:
            batch = self._encode_sparse(list(texts[start : start + self._batch_size]))
            weights.extend({str(k): float(v) for k, v in w.items()} for w in batch)
        return weights


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def sentence_transformer_encoder(path: str, batch_size: int = 32) -> Callable[[list[str]], np.ndarray]:
    """An encode function over a sentence-transformers folder (offline), batches of ``batch_size``."""
    settings.offline_hub()
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - heavy (torch): loaded when an embedder of this kind is first used

    model = SentenceTransformer(path, device="cpu")
    # sentence-transformers sorts the texts by length and pads each batch of ``batch_size`` to its
    # longest: a merged request of many tasks (see batching.py) must not become one huge padded batch
    return lambda texts: model.encode(texts, batch_size=min(len(texts), batch_size), convert_to_numpy=True)


def _flag_model(path: str) -> Callable[[list[str]], np.ndarray]:
    from FlagEmbedding import FlagModel  # noqa: PLC0415 - optional (the flag extra): for flag:, bge-m3: and cross-encoder: specs

    model = FlagModel(path, pooling_method="mean", use_fp16=False, devices="cpu")
    return lambda texts: model.encode(texts)


def _hashing(dim: int) -> Callable[[list[str]], np.ndarray]:
    def encode(texts: list[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                matrix[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
        matrix[:, 0] += 1e-3  # no all-zero rows
        return matrix

    return encode


def _hashing_sparse(dim: int) -> Callable[[list[str]], list[dict[str, float]]]:
    encode = _hashing(dim)
    return lambda texts: [{str(i): float(v) for i, v in enumerate(row) if v >= 1} for row in encode(texts)]


def _bge_m3(path: str) -> tuple[Callable[[list[str]], np.ndarray], Callable[[list[str]], list[dict]]]:
    from FlagEmbedding import BGEM3FlagModel  # noqa: PLC0415 - optional (the flag extra): for flag:, bge-m3: and cross-encoder: specs

    model = BGEM3FlagModel(path, use_fp16=False, devices="cpu")
    return (
        lambda texts: model.encode(texts, return_dense=True)["dense_vecs"],
        lambda texts: model.encode(texts, return_dense=False, return_sparse=True)["lexical_weights"],
    )


_EMBEDDERS: dict[str, Embedder] = {}
_RERANKERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def get_embedder(spec: str | None = None) -> Embedder:
    """The process-wide embedder for ``spec`` (loaded once)."""
    spec = spec or settings.embedder()
    with _LOCK:
        if spec not in _EMBEDDERS:
            kind, _, path = spec.partition(":")
            encode_sparse = None
            if spec == settings.DEFAULT_EMBEDDER:
                encode = sentence_transformer_encoder(str(minilm_path()))
            elif kind == "st" and path:
                encode = sentence_transformer_encoder(path)
            elif kind == "flag" and path:
                encode = _flag_model(path)
            elif kind == "bge-m3" and path:
                encode, encode_sparse = _bge_m3(path)
            elif kind == "hashing" and path.removesuffix("+sparse").isdigit():
                dim = int(path.removesuffix("+sparse"))
                encode = _hashing(dim)
                encode_sparse = _hashing_sparse(dim) if path.endswith("+sparse") else None
            else:
                raise ValueError(
                    f"unknown embedder spec '{spec}': use 'minilm', 'st:/path', 'flag:/path', 'bge-m3:/path' "
                    "or 'hashing:DIM'"
                )
            if settings.embed_merge():
                # concurrent tasks' requests share forward passes (see mtrag_graph/models/batching.py)
                encode = CoalescingEncoder(encode)
            _EMBEDDERS[spec] = Embedder(spec, encode, encode_sparse=encode_sparse)
        return _EMBEDDERS[spec]


class EmbeddingReranker:
    """Cosine similarity between the query and each passage under an embedder."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.name = f"embedding({embedder.name})"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        vectors = self.embedder.embed([query, *passages])
        return [float(x) for x in vectors[1:] @ vectors[0]]


class LexicalReranker:
    """Token-overlap scoring (no model): the share of the query's distinct words found in the passage."""

    name = "lexical"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        wanted = set(words(query))
        if not wanted:
            return [0.0 for _ in passages]
        return [len(wanted & set(words(p))) / len(wanted) for p in passages]


class NoReranker:
    """No model: the passages keep the order they came in (the search's, or the caller's), scored by rank."""

    name = "none"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [-float(i) for i in range(len(passages))]


class CrossEncoderReranker:
    """A FlagEmbedding ``FlagReranker`` from a local folder; scores normalised to 0-1."""

    def __init__(self, path: str, name: str | None = None):
        from FlagEmbedding import FlagReranker  # noqa: PLC0415 - heavy (torch, transformers): loaded when a cross-encoder is first used

        self._model = FlagReranker(path, use_fp16=False, devices="cpu", max_length=MAX_LENGTH)
        self.name = name or f"cross-encoder({path})"
        # its fast tokenizer raises "Already borrowed" when two threads truncate at once
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            scores = self._model.compute_score([[query, p] for p in passages], normalize=True)
        return [float(s) for s in np.atleast_1d(scores)]


def get_reranker(
    spec: str = "embedding", embedder: str | None = None
) -> EmbeddingReranker | CrossEncoderReranker | LexicalReranker | NoReranker | ListwiseReranker:
    """``none`` (the order the passages came in), ``embedding``, ``lexical`` (no model),
    ``cross-encoder[:/path]`` or ``listwise[:MODEL]``."""
    key = f"{spec}|{embedder}"
    if spec == "none":
        return NoReranker()
    if spec == "embedding":
        return EmbeddingReranker(get_embedder(embedder))
    if spec == "lexical":
        return LexicalReranker()
    if spec.partition(":")[0] == "listwise":
        model = spec.partition(":")[2] or settings.large_model()  # read now: MTRAG_LARGE_MODEL may change
        with _LOCK:  # one per model, so its fallback count covers every query
            if f"listwise:{model}" not in _RERANKERS:
                _RERANKERS[f"listwise:{model}"] = ListwiseReranker(model)
            return _RERANKERS[f"listwise:{model}"]
    with _LOCK:
        if key not in _RERANKERS:
            kind, _, path = spec.partition(":")
            if kind != "cross-encoder":
                raise ValueError(
                    f"unknown reranker spec '{spec}': use 'none', 'embedding', 'lexical', 'cross-encoder' (the bundled "
                    "one), 'cross-encoder:/path' or 'listwise[:MODEL]'"
                )
            _RERANKERS[key] = CrossEncoderReranker(path or str(bundled_cross_encoder()), name=spec)
        return _RERANKERS[key]
