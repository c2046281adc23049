"""Passage indexes on disk: a FAISS dense index, a BM25 index and the passages, with a manifest.

Layout of an index folder::

    manifest.json     embedder, dimension, passage count, corpus checksum, FAISS kind (written last)
    passages.jsonl    {"_id", "title", "text"} in index order
    dense.faiss       inner product over L2-normalised embeddings of title + text
    bm25/             bm25s index (English stopwords, Snowball stemmer)
    sparse.jsonl      BGE-M3 lexical weights, one {token: weight} a passage (only with a BGE-M3 embedder)

An index of documents (``mtrag-graph index FOLDER``, ``ingest/build.py``) also holds ``vectors.npy``
(the passages' embeddings, so an update re-embeds only what changed) and ``files.json`` (each file's
content hash and passage count); its passages carry ``source``, ``page``, ``section`` and ``file``. A
manifest with ``"backend": "milvus"`` describes a Milvus collection instead (``retrieval/milvus.py``);
both are behind the interface of ``retrieval/backend.py``, and ``retrieval/registry.load_index`` opens
either.

A folder is built in a temporary sibling and renamed into place, so a crash never leaves a folder that
has a manifest but not the files it describes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TextIO

import numpy as np

from mtrag_graph import settings
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.passages import Passage, passage
from mtrag_graph.retrieval.backend import (
    FILES,
    FORMAT_VERSION,
    MANIFEST,
    Commit,
    Fusion,
    Hits,
    IndexNotFound,
    Rows,
    read_manifest,
)
from mtrag_graph.retrieval.corpus import (
    BM25_STEMMER,
    BM25_STOPWORDS,
    bm25_tokenize,
    domain_of_path,
    file_checksum,
    passage_text,
    read_corpus,
)
from mtrag_graph.retrieval.search import rrf_fuse

log = logging.getLogger(__name__)

METADATA = ("source", "page", "section", "file", "url")  # passage fields kept beside id, title and text
FAISS_KINDS = ("flat", "hnsw", "ivf")
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128


@dataclass
class BuildReport:
    path: Path
    passages: int
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    built: bool = True  # False when an unchanged corpus was skipped

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds > 0 else float("nan")


def embed_by_length(embedder: Any, texts: list[str], show_progress: bool = False) -> np.ndarray:
    """Embed texts in order of length, so each model batch pads to similar lengths; rows in input order.

    The embedder cuts a request into batches of 32 as given: a mix of short and long passages would pad
    every batch to its longest text (``benchmarks/ingest_speed.py`` measures the difference).
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = embedder.embed([texts[i] for i in order], show_progress=show_progress)
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


# -- FAISS -----------------------------------------------------------------------------------------


def make_faiss_index(
    vectors: np.ndarray,
    kind: str = "flat",
    *,
    nlist: int | None = None,
    hnsw_m: int = HNSW_M,
    ef_construction: int = HNSW_EF_CONSTRUCTION,
) -> tuple[Any, dict[str, Any]]:
    """An inner-product FAISS index over ``vectors`` (rows L2-normalised) and its search parameters.

    ``flat`` is exact; ``hnsw`` (graph) and ``ivf`` (inverted lists, ``nlist`` about 4 sqrt(n)) are
    approximate, for corpora where exact search is too slow.
    """
    import faiss  # noqa: PLC0415 - heavy (faiss, bm25s, scipy): loaded by full-RAG runs only

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    index: Any
    if kind == "flat":
        index, params = faiss.IndexFlatIP(dim), {}
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        params = {"M": hnsw_m, "efConstruction": ef_construction, "efSearch": HNSW_EF_SEARCH}
    elif kind == "ivf":
        # faiss wants at least 39 training points a list (tiny corpora get few lists); 64 a list is
        # plenty for k-means and keeps training fast on large corpora.
        nlist = nlist or max(1, min(int(4 * math.sqrt(n)), n // 39))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(0)
        index.train(
            vectors if n <= 64 * nlist else vectors[np.sort(rng.choice(n, 64 * nlist, replace=False))]
        )
        params = {"nlist": nlist, "nprobe": max(1, min(nlist, 16))}
    else:
        raise ValueError(f"unknown FAISS index kind '{kind}': use one of {', '.join(FAISS_KINDS)}")
    index.add(vectors)
    set_search_params(index, params)
    return index, params


def set_search_params(index: Any, params: dict[str, Any]) -> None:
    if "efSearch" in params:
        index.hnsw.efSearch = int(params["efSearch"])
    if "nprobe" in params:
        index.nprobe = int(params["nprobe"])


# -- BM25 ------------------------------------------------------------------------------------------


# -- building --------------------------------------------------------------------------------------


def _unchanged(manifest: dict[str, Any] | None, checksum: str, embedder: str, faiss_kind: str) -> bool:
    return bool(
        manifest
        and manifest.get("format_version") == FORMAT_VERSION
        and manifest.get("corpus_sha256") == checksum
        and manifest.get("embedder") == embedder
        and manifest.get("faiss", {}).get("kind") == faiss_kind
    )


def build_index(
    corpus_path: str | Path,
    out_dir: str | Path,
    *,
    embedder: str = settings.DEFAULT_EMBEDDER,
    faiss_kind: str = "flat",
    force: bool = False,
    show_progress: bool = True,
) -> BuildReport:
    """Index one corpus into ``out_dir``; an unchanged corpus (same checksum and settings) is skipped."""
    corpus_path, out_dir = Path(corpus_path), Path(out_dir)
    if faiss_kind not in FAISS_KINDS:
        raise ValueError(f"unknown FAISS index kind '{faiss_kind}': use one of {', '.join(FAISS_KINDS)}")
    checksum = file_checksum(corpus_path)
    manifest = read_manifest(out_dir)
    if not force and _unchanged(manifest, checksum, embedder, faiss_kind):
        assert manifest is not None
        return BuildReport(out_dir, int(manifest["passages"]), built=False)

    started = time.perf_counter()
    corpus = read_corpus(corpus_path)
    for error in corpus.errors:
        log.warning("%s: %s (skipped)", corpus_path, error)
    if not len(corpus):
        raise ValueError(f"{corpus_path}: no valid passages")
    model = get_embedder(embedder)
    texts = corpus.indexed_texts()
    vectors = embed_by_length(model, texts, show_progress=show_progress)
    dense, dense_params = make_faiss_index(vectors, faiss_kind)

    import bm25s  # noqa: PLC0415 - heavy (faiss, bm25s, scipy): loaded by full-RAG runs only
    import faiss  # noqa: PLC0415 - as above

    bm25 = bm25s.BM25()
    bm25.index(bm25_tokenize(texts), show_progress=False)
    sparse = model.embed_sparse(texts, show_progress=show_progress) if model.has_sparse else None

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        with open(tmp / "passages.jsonl", "w", encoding="utf-8") as handle:
            for doc_id, title, text in zip(corpus.ids, corpus.titles, corpus.texts, strict=True):
                handle.write(
                    json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n"
                )
        faiss.write_index(dense, str(tmp / "dense.faiss"))
        bm25.save(str(tmp / "bm25"), show_progress=False)
        if sparse is not None:
            with open(tmp / "sparse.jsonl", "w", encoding="utf-8") as handle:
                for weights in sparse:
                    handle.write(json.dumps(weights) + "\n")
        seconds = time.perf_counter() - started
        manifest = {
            "format_version": FORMAT_VERSION,
            "embedder": embedder,
            "dim": int(vectors.shape[1]),
            "passages": len(corpus),
            "skipped_lines": len(corpus.errors),
            "corpus": str(corpus_path.resolve()),
            "corpus_sha256": checksum,
            "faiss": {"kind": faiss_kind, **dense_params},
            "bm25": {"stopwords": BM25_STOPWORDS, "stemmer": BM25_STEMMER},
            "sparse": sparse is not None,
            "build_seconds": round(seconds, 3),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        with open(tmp / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2)
        _replace_dir(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BuildReport(out_dir, len(corpus), corpus.errors, seconds)


def _replace_dir(new: Path, target: Path) -> None:
    """Move ``new`` to ``target``; an older ``target`` is moved aside first and then deleted."""
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.rename(target, old / target.name)
    os.rename(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_indexes(corpus_paths: list[str | Path], out_dir: str | Path, **options: Any) -> list[BuildReport]:
    """Several corpora go to ``out_dir/<file stem>/`` (one sub-index per domain); one goes to ``out_dir``."""
    paths = [Path(p) for p in corpus_paths]
    stems = [p.stem for p in paths]
    if len(set(stems)) != len(stems):
        raise ValueError(f"corpus file names must differ (they name the sub-indexes): {stems}")
    if len(paths) == 1 and not options.pop("per_file", False):
        return [build_index(paths[0], out_dir, **options)]
    options.pop("per_file", None)
    return [build_index(p, Path(out_dir) / p.stem, **options) for p in paths]


class FolderWriter:
    """One commit of a documents index folder (``backend.DocumentWriter``): built in a temporary sibling
    folder and swapped in (``_replace_dir``), so a crash leaves the old index. Vectors are streamed into a
    memory-mapped ``vectors.npy``; FAISS and BM25 are rebuilt from them."""

    def __init__(self, commit: Commit) -> None:
        self.commit = commit
        self.texts: list[str] = []
        self.row = 0
        self.tmp: Path | None = None
        self.out: TextIO | None = None
        self.vectors: Any = None
        self.started = time.perf_counter()

    def start(self) -> None:
        commit, old_vectors = self.commit, None
        if not commit.rebuild and (commit.out_dir / "vectors.npy").exists():
            old_vectors = np.load(commit.out_dir / "vectors.npy", mmap_mode="r")
        commit.out_dir.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{commit.out_dir.name}.tmp-", dir=commit.out_dir.parent))
        self.vectors = np.lib.format.open_memmap(
            self.tmp / "vectors.npy", mode="w+", dtype=np.float32, shape=(commit.passages, commit.dim)
        )
        self.out = open(self.tmp / "passages.jsonl", "w", encoding="utf-8")
        if old_vectors is None:
            return
        with open(commit.out_dir / "passages.jsonl", encoding="utf-8") as old:
            for position, line in enumerate(old):
                item = json.loads(line)
                if item.get("file") in commit.drop or item.get("file") not in commit.record:
                    continue
                self.out.write(line)
                self.vectors[self.row] = old_vectors[position]
                self.texts.append(passage_text(item["title"], item["text"]))
                self.row += 1
        del old_vectors

    def add(self, rows: Rows, vectors: np.ndarray) -> None:
        assert self.out is not None
        for item in rows:
            self.out.write(json.dumps(item, ensure_ascii=False) + "\n")
            self.texts.append(passage_text(item["title"], item["text"]))
        self.vectors[self.row : self.row + len(rows)] = vectors
        self.row += len(rows)

    def finish(self, manifest: dict[str, Any]) -> None:
        import bm25s  # noqa: PLC0415 - heavy (faiss, bm25s, scipy): loaded by full-RAG runs only
        import faiss  # noqa: PLC0415 - as above

        assert self.out is not None and self.tmp is not None
        self.out.close()
        commit = self.commit
        if self.row != commit.passages:
            raise RuntimeError(
                f"{commit.out_dir}: wrote {self.row} passages where the file record counts {commit.passages}"
            )
        self.vectors.flush()
        dense, dense_params = make_faiss_index(np.asarray(self.vectors), commit.kind)
        faiss.write_index(dense, str(self.tmp / "dense.faiss"))
        bm25 = bm25s.BM25()
        bm25.index(bm25_tokenize(self.texts), show_progress=False)
        bm25.save(str(self.tmp / "bm25"), show_progress=False)
        self.vectors = None
        with open(self.tmp / FILES, "w", encoding="utf-8") as handle:
            json.dump(commit.record, handle, indent=1)
        with open(self.tmp / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    **manifest,
                    "faiss": {"kind": commit.kind, **dense_params},
                    "bm25": {"stopwords": BM25_STOPWORDS, "stemmer": BM25_STEMMER},
                    "sparse": False,
                    "build_seconds": round(time.perf_counter() - self.started, 3),
                },
                handle,
                indent=2,
            )
        _replace_dir(self.tmp, commit.out_dir)

    def abort(self) -> None:
        if self.out is not None:
            self.out.close()
        self.vectors = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


# -- loading ---------------------------------------------------------------------------------------


class PassageIndex:
    """A loaded index: passages, FAISS index, BM25 index (and BGE-M3 sparse weights when built); the
    built-in ``backend.Backend``. A hit's key is the passage's position."""

    name: ClassVar[str] = "faiss"

    def __init__(self, path: Path, manifest: dict[str, Any]):
        import bm25s  # noqa: PLC0415 - heavy (faiss, bm25s, scipy): loaded by full-RAG runs only
        import faiss  # noqa: PLC0415 - as above

        self.path, self.manifest = path, manifest
        self.ids, self.titles, self.texts = [], [], []
        self.metadata: list[dict[str, Any]] = []  # source, page, section of a documents index's passages
        with open(path / "passages.jsonl", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                self.ids.append(row["_id"])
                self.titles.append(row["title"])
                self.texts.append(row["text"])
                self.metadata.append({k: row[k] for k in METADATA if row.get(k) is not None})
        self.dense = faiss.read_index(str(path / "dense.faiss"))
        set_search_params(self.dense, manifest.get("faiss", {}))
        self.bm25 = bm25s.BM25.load(str(path / "bm25"), show_progress=False)
        self.sparse = _load_sparse(path / "sparse.jsonl") if manifest.get("sparse") else None
        if self.dense.ntotal != len(self.ids) or self.dense.d != manifest["dim"]:
            raise IndexNotFound(f"{path}: FAISS index does not match its manifest")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def embedder_spec(self) -> str:
        return str(self.manifest["embedder"])

    def bm25_ranking(self, query: str, depth: int) -> Hits:
        vocab = self.bm25.vocab_dict
        tokens = [t for t in bm25_tokenize([query])[0] if t in vocab]
        if not tokens:
            return []
        scores = np.asarray(self.bm25.get_scores(tokens), dtype=np.float32)
        return [(i, s) for i, s in _top(scores, depth) if s > 0]

    def dense_ranking(self, vector: np.ndarray, depth: int) -> Hits:
        scores, ids = self.dense.search(np.asarray(vector, np.float32).reshape(1, -1), min(depth, len(self)))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def sparse_ranking(self, weights: dict[str, float], depth: int) -> Hits:
        """BGE-M3 lexical matching: the dot product of query and passage token weights."""
        if self.sparse is None:
            return []
        query = np.zeros(self.sparse.shape[1], dtype=np.float32)
        for token, weight in weights.items():
            if int(token) < len(query):
                query[int(token)] = weight
        scores = np.asarray(self.sparse @ query).ravel()
        return [(i, s) for i, s in _top(scores, depth) if s > 0]

    def hybrid_ranking(self, query: str, vector: np.ndarray, fusion: Fusion) -> Hits:
        """BM25 and dense (and BGE-M3 sparse, when built) fused by weighted reciprocal rank fusion."""
        rankings = [self.bm25_ranking(query, fusion.depth), self.dense_ranking(vector, fusion.depth)]
        weights = [fusion.bm25, fusion.dense]
        embedder = get_embedder(self.embedder_spec)
        if self.sparse is not None and embedder.has_sparse:
            rankings.append(self.sparse_ranking(embedder.embed_sparse([query])[0], fusion.depth))
            weights.append(fusion.sparse)
        return rrf_fuse([[i for i, _ in ranking] for ranking in rankings], weights, k=fusion.rrf_k)[
            : fusion.top_k
        ]

    def passages(self, hits: Hits) -> list[Passage]:
        """The passages at the hits' positions, with their scores and origins."""
        return [
            passage({"_id": self.ids[i], "title": self.titles[i], "text": self.texts[i],
                     **self.metadata[i], "score": round(score, 6)})
            for i, score in hits
        ]  # fmt: skip

    @classmethod
    def document_writer(cls, commit: Commit) -> FolderWriter:
        return FolderWriter(commit)

    @property
    def domain(self) -> str | None:
        """From the folder name, else from the corpus file name (``cloud.jsonl``)."""
        return domain_of_path(self.path.name) or domain_of_path(Path(self.manifest.get("corpus", "")).name)


def _top(scores: np.ndarray, depth: int) -> Hits:
    depth = min(depth, len(scores))
    if depth <= 0:
        return []
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]


def _load_sparse(path: Path) -> Any:
    """BGE-M3 lexical weights as a CSR matrix (passages x token ids)."""
    from scipy.sparse import csr_matrix  # noqa: PLC0415 - heavy (scipy): full-RAG runs only

    rows, cols, values = [], [], []
    with open(path, encoding="utf-8") as handle:
        for row, line in enumerate(handle):
            for token, weight in json.loads(line).items():
                rows.append(row)
                cols.append(int(token))
                values.append(float(weight))
    width = max(cols, default=0) + 1
    return csr_matrix((values, (rows, cols)), shape=(row + 1 if rows else 0, width), dtype=np.float32)
