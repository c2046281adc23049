"""The retrieval backends by name, and opening an index folder with the one its manifest names.

An index folder's ``manifest.json`` says which backend holds it (``"backend"``; none: the built-in
index, ``index.PassageIndex``); ``BACKENDS`` lists every backend by that name, so neither backend
module knows the other. A backend of your own implements ``backend.Backend`` and is listed here.
Loaded indexes are cached per process.
"""

from __future__ import annotations

import threading
from pathlib import Path

from mtrag_graph.retrieval.backend import FORMAT_VERSION, MANIFEST, Backend, IndexNotFound, read_manifest
from mtrag_graph.retrieval.index import PassageIndex
from mtrag_graph.retrieval.milvus import MilvusIndex
from mtrag_graph.tasks import domain_of

# The backends by the name an index's manifest gives (``"backend"``; none: the built-in one).
BACKENDS: dict[str, type[Backend]] = {PassageIndex.name: PassageIndex, MilvusIndex.name: MilvusIndex}
_INDEXES: dict[tuple[str, int], Backend] = {}
_LOCK = threading.Lock()


def load_index(path: str | Path) -> Backend:
    """The index in ``path``, loaded once per process (reloaded when its manifest changes)."""
    path = Path(path).resolve()
    manifest_path = path / MANIFEST
    try:
        stamp = manifest_path.stat().st_mtime_ns
    except OSError:
        raise IndexNotFound(
            f"no index in {path} (no {MANIFEST}; build one with `mtrag-graph index`)"
        ) from None
    key = (str(path), stamp)
    with _LOCK:
        if key not in _INDEXES:
            manifest = read_manifest(path)
            if manifest is None or manifest.get("format_version") != FORMAT_VERSION:
                raise IndexNotFound(f"{manifest_path}: unreadable or from another format version")
            for stale in [k for k in _INDEXES if k[0] == key[0]]:
                del _INDEXES[stale]
            backend = BACKENDS.get(str(manifest.get("backend", PassageIndex.name)))
            if backend is None:
                raise IndexNotFound(
                    f"{manifest_path}: unknown backend {manifest.get('backend')!r}: use one of {', '.join(BACKENDS)}"
                )
            _INDEXES[key] = backend(path, manifest)
        return _INDEXES[key]


def index_path_for(index_dir: str | Path, collection: str | None) -> Path:
    """The index for a collection: ``index_dir`` itself when it holds one index, else its domain folder."""
    index_dir = Path(index_dir)
    if (index_dir / MANIFEST).exists():
        return index_dir
    domain = domain_of(collection)
    if domain is None:
        available = (
            sorted(p.name for p in index_dir.iterdir() if (p / MANIFEST).exists())
            if index_dir.is_dir()
            else []
        )
        raise IndexNotFound(
            f"cannot tell the domain of collection {collection!r}; "
            f"indexes in {index_dir}: {available or 'none'}"
        )
    candidates = [index_dir / domain] + ([index_dir / "ibmcloud"] if domain == "cloud" else [])
    for candidate in candidates:
        if (candidate / MANIFEST).exists():
            return candidate
    raise IndexNotFound(f"no index for domain '{domain}' in {index_dir} (expected {index_dir / domain})")


def index_for(index_dir: str | Path, collection: str | None) -> Backend:
    return load_index(index_path_for(index_dir, collection))
