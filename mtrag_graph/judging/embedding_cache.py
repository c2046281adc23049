"""Sentence embeddings kept on disk (SQLite), for judging the same passages again across runs.

The fidelity command and the answer judge's training embed the golden file's ~8,000 sentences; on a
shared CPU that is many minutes, so they keep the vectors, keyed by embedder and text. The graph's
candidate judge does not use it (a task's passages are embedded once per run).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mtrag_graph.judging.support import SentenceEmbedder
from mtrag_graph.models.bundled import cache_dir


def default_embedding_cache() -> Path:
    return cache_dir() / "judge-cache" / "embeddings.sqlite"


class CachedEmbedder:
    """``embed`` through an SQLite table of float32 vectors keyed by (embedder name, sha1 of the text)."""

    def __init__(self, embedder: SentenceEmbedder, name: str, path: str | Path):
        self.embedder = embedder
        self.name = name
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
            )

    def _key(self, text: str) -> str:
        return hashlib.sha1(f"{self.name}\n{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(dict.fromkeys(keys[start : start + 500]))
                marks = ",".join("?" * len(chunk))
                for key, blob in self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if missing:
            vectors = np.asarray(self.embedder.embed(missing, show_progress), dtype=np.float32)
            rows = [(self._key(t), v.tobytes()) for t, v in zip(missing, vectors, strict=True)]
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
            found.update({k: v for (k, _), v in zip(rows, vectors, strict=True)})
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def close(self) -> None:
        self._db.close()
