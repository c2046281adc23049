"""The Milvus index backend: the same passages, hybrid search and dual-query merge on a search engine
that runs as a cluster when one machine is not enough.

By default the collection lives in the index folder as a Milvus Lite file (``milvus.db``: embedded, no
server, the same ``pymilvus`` API). ``MTRAG_MILVUS_URI=http://host:19530`` (and ``MTRAG_MILVUS_TOKEN``
where the server wants one) points the same index at Milvus Standalone or Distributed instead.

One row a passage: the id, title, text, source fields, the dense vector (inner product over
L2-normalised embeddings, as the built-in FAISS index) and ``body`` (title + text) analysed by Milvus'
BM25 function (standard tokenizer, lowercase, English stopwords, English Snowball stemmer: the
built-in ``bm25s`` settings), whose sparse vector is the BM25 ranking. Hybrid search with equal weights
fuses the two rankings in the engine (``RRFRanker``); other weights are fused by ``search.rrf_fuse``.
``MilvusIndex`` is a ``backend.Backend``; ``MilvusWriter`` its ``DocumentWriter``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from mtrag_graph import settings
from mtrag_graph.passages import Passage, passage
from mtrag_graph.retrieval.backend import FILES, MANIFEST, Commit, Fusion, Hits, Rows
from mtrag_graph.retrieval.corpus import bm25_tokenize, domain_of_path, passage_text
from mtrag_graph.retrieval.search import rrf_fuse

LOCAL_FILE = "milvus.db"
FIELDS = ("title", "text", "source", "page", "section", "file")
VARCHAR_BYTES = 65_535
INSERT_BATCH = 1000
INDEX_TYPES = {"flat": "FLAT", "hnsw": "HNSW", "ivf": "IVF_FLAT"}
# The words are analysed here, as the built-in backend does (``corpus.bm25_tokenize``: bm25s' regex,
# English stopwords, Snowball stemmer), and Milvus indexes the analysed text split on spaces. Milvus
# Lite's analyzer has no stemmer (its "stemmer" filter is ignored: nDCG@5 of BM25 on clapnq fell from
# 0.545 to 0.517), and a server's analyzer differs in its details: analysing here makes the embedded
# engine, a cluster and the built-in backend score the same tokens.
ANALYZER = {"tokenizer": "standard", "filter": ["lowercase"]}
BM25_PARAMS = {"bm25_k1": 1.5, "bm25_b": 0.75}  # bm25s' defaults (Milvus' own k1 is 1.2)
BUILTIN_FILES = ("passages.jsonl", "vectors.npy", "dense.faiss", "bm25", "sparse.jsonl")

_CLIENTS: dict[str, Any] = {}
_LOCK = threading.Lock()


def uri_for(path: Path, manifest: dict[str, Any] | None = None) -> str:
    """``MTRAG_MILVUS_URI`` when set, else the URI the index was built on, else the folder's Lite file."""
    remote = settings.milvus_uri() or (manifest or {}).get("milvus", {}).get("uri")
    return remote or str((path / LOCAL_FILE).resolve())


def client(uri: str) -> Any:
    """One client per URI and process (Milvus Lite opens its file once)."""
    from pymilvus import MilvusClient  # noqa: PLC0415 - optional (the milvus extra): Milvus indexes only

    with _LOCK:
        if uri not in _CLIENTS:
            token = settings.milvus_token()
            _CLIENTS[uri] = MilvusClient(uri, token=token) if token else MilvusClient(uri)
        return _CLIENTS[uri]


def collection_name(path: Path) -> str:
    """A collection name from the index folder's name (letters, digits and underscores)."""
    name = "".join(c if c.isalnum() else "_" for c in path.resolve().name)
    return f"mtrag_{name}"[:255]


def _clip(text: str, limit: int = VARCHAR_BYTES - 1024) -> str:
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", errors="ignore")


def create_collection(milvus: Any, name: str, dim: int, kind: str = "flat") -> None:
    from pymilvus import DataType, Function, FunctionType  # noqa: PLC0415 - optional (the milvus extra): Milvus indexes only

    schema = milvus.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=2048)
    schema.add_field(
        "body", DataType.VARCHAR, max_length=VARCHAR_BYTES, enable_analyzer=True, analyzer_params=ANALYZER
    )
    schema.add_field("title", DataType.VARCHAR, max_length=4096)
    schema.add_field("text", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    schema.add_field("source", DataType.VARCHAR, max_length=4096)
    schema.add_field("page", DataType.INT64)  # 0: no page
    schema.add_field("section", DataType.VARCHAR, max_length=4096)
    schema.add_field("file", DataType.VARCHAR, max_length=4096)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["body"],
            output_field_names=["sparse"],
        )
    )
    params = milvus.prepare_index_params()
    dense_params = (
        {"M": 32, "efConstruction": 80} if kind == "hnsw" else {"nlist": 1024} if kind == "ivf" else {}
    )
    params.add_index(field_name="dense", index_type=INDEX_TYPES[kind], metric_type="IP", params=dense_params)
    params.add_index(
        field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=BM25_PARAMS
    )
    # pymilvus 3 asks the server for a timestamp while creating a collection; Milvus Lite does not
    # implement the call, the client goes on without it, and the embedded server logs a traceback
    server_log = logging.getLogger("grpc._server")
    level = server_log.level
    server_log.setLevel(logging.CRITICAL)
    try:
        milvus.create_collection(name, schema=schema, index_params=params)
    finally:
        server_log.setLevel(level)


def analysed(texts: list[str]) -> list[str]:
    """The BM25 tokens of each text, joined by spaces: what the collection's ``body`` holds."""
    return [" ".join(tokens) for tokens in bm25_tokenize(texts)]


def entity(row: dict[str, Any], vector: np.ndarray, body: str) -> dict[str, Any]:
    return {
        "id": str(row["_id"]),
        "body": _clip(body),
        "title": _clip(row.get("title") or "", 4000),
        "text": _clip(row["text"]),
        "source": _clip(str(row.get("source") or ""), 4000),
        "page": int(row.get("page") or 0),
        "section": _clip(str(row.get("section") or ""), 4000),
        "file": _clip(str(row.get("file") or ""), 4000),
        "dense": np.asarray(vector, dtype=np.float32).tolist(),
    }


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class MilvusWriter:
    """One commit of a documents index in Milvus (``backend.DocumentWriter``): delete the rows of removed
    and changed files, insert the new files' rows, then write the record and the manifest.

    The record (``files.json``) and manifest are written last: a run stopped before them leaves rows
    whose files the record does not list, and the next run deletes a file's rows before inserting them
    (ids are stable), so nothing is doubled and nothing is lost.
    """

    def __init__(self, commit: Commit) -> None:
        self.commit = commit
        self.uri = uri_for(commit.out_dir)
        self.name = collection_name(commit.out_dir)
        self.milvus: Any = None

    def start(self) -> None:
        commit = self.commit
        commit.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in BUILTIN_FILES:  # a built-in index in the folder before: its files no longer apply
            target = commit.out_dir / stale
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        self.milvus = client(self.uri)
        if commit.rebuild and self.milvus.has_collection(self.name):
            self.milvus.drop_collection(self.name)
        if not self.milvus.has_collection(self.name):
            create_collection(self.milvus, self.name, commit.dim, commit.kind)
        self._delete(sorted(commit.drop))

    def _delete(self, files: list[str]) -> None:
        for start in range(0, len(files), 500):
            self.milvus.delete(self.name, filter=f"file in {json.dumps(files[start : start + 500])}")

    def add(self, rows: Rows, vectors: np.ndarray) -> None:
        # rows a stopped run may have inserted before its record was written
        self._delete(sorted({str(r["file"]) for r in rows} - self.commit.drop))
        for start in range(0, len(rows), INSERT_BATCH):
            batch = rows[start : start + INSERT_BATCH]
            bodies = analysed([passage_text(r["title"], r["text"]) for r in batch])
            triples = zip(batch, vectors[start : start + INSERT_BATCH], bodies, strict=True)
            self.milvus.insert(self.name, [entity(r, v, body) for r, v, body in triples])

    def finish(self, manifest: dict[str, Any]) -> None:
        self.milvus.flush(self.name)
        _write_json(self.commit.out_dir / FILES, self.commit.record)
        remote = None if self.uri.endswith(LOCAL_FILE) else self.uri
        milvus = {"collection": self.name, "uri": remote}
        _write_json(
            self.commit.out_dir / MANIFEST, {**manifest, "faiss_kind": self.commit.kind, "milvus": milvus}
        )

    def abort(self) -> None:
        """Nothing to undo: the record was not written, so the next run deletes what this one inserted."""


class MilvusIndex:
    """A Milvus collection behind the backend interface (``backend.Backend``); a hit's key is a passage id."""

    name: ClassVar[str] = "milvus"

    def __init__(self, path: Path, manifest: dict[str, Any]):
        self.path, self.manifest = path, manifest
        self.collection = str(manifest.get("milvus", {}).get("collection") or collection_name(path))
        self.client = client(uri_for(path, manifest))
        if not self.client.has_collection(self.collection):
            raise LookupError(
                f"{path}: Milvus collection '{self.collection}' not found at {uri_for(path, manifest)}"
            )
        self.client.load_collection(self.collection)

    def __len__(self) -> int:
        return int(self.manifest.get("passages", 0))

    @property
    def embedder_spec(self) -> str:
        return str(self.manifest["embedder"])

    @property
    def domain(self) -> str | None:
        return domain_of_path(self.path.name)

    def _hits(self, result: Any) -> Hits:
        return [(str(hit["id"]), float(hit["distance"])) for hit in (result[0] if result else [])]

    def bm25_ranking(self, query: str, depth: int) -> Hits:
        words = analysed([query])[0]
        if not words:
            return []
        result = self.client.search(
            self.collection,
            data=[words],
            anns_field="sparse",
            limit=depth,
            search_params={"metric_type": "BM25"},
        )
        return [(i, abs(s)) for i, s in self._hits(result)]

    def dense_ranking(self, vector: np.ndarray, depth: int) -> Hits:
        result = self.client.search(
            self.collection,
            data=[np.asarray(vector, np.float32).tolist()],
            anns_field="dense",
            limit=depth,
            search_params={"metric_type": "IP"},
        )
        return self._hits(result)

    def hybrid_ranking(self, query: str, vector: np.ndarray, fusion: Fusion) -> Hits:
        """BM25 and dense rankings fused: by the engine's reciprocal rank fusion when their weights are equal,
        else by ``search.rrf_fuse``."""
        depth, top_k, rrf_k = fusion.depth, fusion.top_k, fusion.rrf_k
        if fusion.bm25 != fusion.dense:
            rankings = [self.bm25_ranking(query, depth), self.dense_ranking(vector, depth)]
            fused = rrf_fuse([[i for i, _ in r] for r in rankings], [fusion.bm25, fusion.dense], k=rrf_k)
            return fused[:top_k]
        from pymilvus import AnnSearchRequest, RRFRanker  # noqa: PLC0415 - optional (the milvus extra): Milvus indexes only

        words = analysed([query])[0]
        if not words:  # no word BM25 knows: the dense ranking alone, as RRF of one list
            return [
                (i, 1.0 / (rrf_k + rank)) for rank, (i, _) in enumerate(self.dense_ranking(vector, top_k), 1)
            ]
        requests = [
            AnnSearchRequest(data=[words], anns_field="sparse", param={"metric_type": "BM25"}, limit=depth),
            AnnSearchRequest(
                data=[np.asarray(vector, np.float32).tolist()],
                anns_field="dense",
                param={"metric_type": "IP"},
                limit=depth,
            ),
        ]
        result = self.client.hybrid_search(self.collection, requests, ranker=RRFRanker(rrf_k), limit=top_k)
        return self._hits(result)

    def passages(self, hits: Hits) -> list[Passage]:
        """The passages of the hits, with their scores and origins (a Milvus row's empty fields and
        page 0 say it has none)."""
        if not hits:
            return []
        rows = self.client.get(self.collection, ids=[i for i, _ in hits], output_fields=list(FIELDS))
        found = {str(row["id"]): row for row in rows}
        return [passage({**found[i], "_id": i, "score": round(score, 6)}) for i, score in hits if i in found]

    @classmethod
    def document_writer(cls, commit: Commit) -> MilvusWriter:
        return MilvusWriter(commit)
