"""The retrieval backend interface: what an index offers, whichever engine holds it.

Two backends implement it: the built-in folder index (``retrieval/index.py``: FAISS, BM25 and the
passages as files) and Milvus (``retrieval/milvus.py``: a collection, embedded or on a server). Nothing
outside them asks which one it has:

- **search**: ``search.py`` takes a query through a backend's three rankings (BM25, dense, and the two
  fused), with the modes, the query's embedding and the dual-query merge written once there;
- **passages**: the hits of a search, or passages by id (a cited passage's text and origin for the
  served page), as the same dicts from either backend;
- **commit documents**: ``commit_documents`` (below) brings a documents index up to date through the
  backend's ``DocumentWriter`` (``ingest/build.py``).

An index folder's ``manifest.json`` names its backend (``"backend"``; none: the built-in one), and
``registry.load_index`` opens it with the class listed under that name (``registry.BACKENDS``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from mtrag_graph.passages import Passage

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
FILES = "files.json"

# (key, score) pairs, best first; a key is the backend's own (a position, a passage id), which only the
# same backend's ``passages`` reads
Hits = list[tuple[Any, float]]
Rows = list[dict[str, Any]]  # index rows as stored (``_id``, ..., ``file``)


class IndexNotFound(LookupError):
    """No usable index where one was expected (missing folder, no manifest, unknown domain)."""


def read_manifest(path: str | Path) -> dict[str, Any] | None:
    """The manifest of the index in ``path``; None when it has none or it cannot be read."""
    try:
        with open(Path(path) / MANIFEST, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError):
        return None


@dataclass(frozen=True)
class Fusion:
    """A hybrid search's fusion: each ranking's top ``depth`` fused by reciprocal rank fusion (``rrf_k``)
    with a weight each (``bm25``, ``dense``, ``sparse``: BGE-M3's lexical weights); the top ``top_k`` kept."""

    top_k: int
    depth: int
    rrf_k: int = 60
    bm25: float = 1.0
    dense: float = 1.0
    sparse: float = 1.0


@dataclass(frozen=True)
class Commit:
    """One commit of a documents index in ``out_dir``: the files it holds afterwards (``record``:
    ``{file: {sha256, passages, key}}``), the files whose old passages go (``drop``: removed and changed),
    the vectors' dimension, the dense index kind, and ``rebuild``: nothing of the old index is kept."""

    out_dir: Path
    record: dict[str, dict[str, Any]]
    drop: set[str]
    dim: int
    kind: str
    rebuild: bool

    @property
    def passages(self) -> int:
        return sum(int(entry["passages"]) for entry in self.record.values())


class Backend(Protocol):
    """An opened index: its passages, searched and read."""

    name: ClassVar[str]  # the manifest's "backend"
    path: Path
    manifest: dict[str, Any]

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None: ...

    def __len__(self) -> int: ...

    @property
    def embedder_spec(self) -> str:
        """The embedder its dense vectors were made with (queries are embedded with it)."""
        ...

    @property
    def domain(self) -> str | None:
        """The benchmark domain it holds, when its name tells."""
        ...

    def bm25_ranking(self, query: str, depth: int) -> Hits:
        """BM25 over title + text; passages sharing no term with the query are not ranked."""
        ...

    def dense_ranking(self, vector: np.ndarray, depth: int) -> Hits:
        """Inner product of ``vector`` with the passages' L2-normalised embeddings."""
        ...

    def hybrid_ranking(self, query: str, vector: np.ndarray, fusion: Fusion) -> Hits:
        """The rankings fused as ``fusion`` says."""
        ...

    def passages(self, hits: Hits) -> list[Passage]:
        """The hits as passages (``passages.Passage``: id, title, text, origin, ``score``)."""
        ...

    @classmethod
    def document_writer(cls, commit: Commit) -> DocumentWriter:
        """The writer of ``commit`` into this backend (see ``commit_documents``)."""
        ...


class DocumentWriter(Protocol):
    """One commit of a documents index: ``start``, ``add`` each part of new passages, ``finish``; ``abort``
    on a failure (what the index held before stays usable)."""

    def start(self) -> None:
        """Keep the passages of files still in the record and not in ``drop``; remove the others."""
        ...

    def add(self, rows: Rows, vectors: np.ndarray) -> None:
        """New passages (``_id``, ``title``, ``text``, origin fields, ``file``) and their embeddings."""
        ...

    def finish(self, manifest: dict[str, Any]) -> None:
        """Make the commit the index: its passages, the record (``files.json``), then ``manifest`` with the
        backend's own fields added."""
        ...

    def abort(self) -> None: ...


def commit_documents(
    backend: type[Backend],
    out_dir: Path,
    *,
    record: dict[str, dict[str, Any]],
    parts: Callable[[], Iterator[tuple[Rows, np.ndarray]]],
    drop: set[str],
    dim: int,
    manifest: dict[str, Any],
    rebuild: bool,
) -> None:
    """Bring the documents index in ``out_dir`` to ``record`` (``{file: {sha256, passages, key}}``): the
    passages of the files it keeps, minus those of ``drop`` (removed and changed files), plus the new ones
    that ``parts`` yields. ``rebuild``: nothing of the old index is kept (other settings).

    ``manifest`` gives the settings (``embedder``, ``chunk``, ``faiss_kind``); the record and the manifest
    are written last, so an interrupted commit never leaves a manifest that describes passages the index
    does not hold.
    """
    kind = str(manifest.get("faiss_kind", "flat"))
    commit = Commit(Path(out_dir), record, drop, dim, kind, rebuild)
    writer = backend.document_writer(commit)
    try:
        writer.start()
        for rows, vectors in parts():
            writer.add(rows, vectors)
        writer.finish(
            {
                "format_version": FORMAT_VERSION,
                "kind": "documents",
                "backend": backend.name,
                "embedder": manifest["embedder"],
                "chunk": manifest["chunk"],
                "dim": dim,
                "passages": commit.passages,
                "files": len(record),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
        )
    except BaseException:
        writer.abort()
        raise
