"""A disk cache of model replies (``MTRAG_LLM_CACHE=FILE``): the same prompt to the same model, with the
same options, is answered from the cache instead of the model.

It is LangChain's own cache hook (``BaseChatModel.cache``, consulted in ``_generate_with_cache``), backed
by SQLite (WAL, so several processes share one file), keyed by the serialised messages and the model's
identity and call options (``_get_llm_string``). Use it to rerun or extend an experiment at the cost of
only the calls that changed: e.g. ``answer --clarify`` after ``answer`` on the same tasks calls the
models again only where the clarify node changes the route. The local models decode greedily, so a
cached reply is the reply the model would give again.

A reply served from the cache is marked ``response_metadata["cached"] = True``; the node bookkeeping
then counts no processed or generated tokens for it, and its seconds are the lookup's. Timings of a run
that hit the cache are therefore not model timings.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.load import dumps, loads
from langchain_core.outputs import ChatGeneration, Generation

_SCHEMA = "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, generations TEXT NOT NULL)"


class ReplyCache(BaseCache):
    """SQLite-backed LangChain cache of model replies."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    @staticmethod
    def _key(prompt: str, llm_string: str) -> str:
        return hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT generations FROM replies WHERE key = ?", (self._key(prompt, llm_string),)
            ).fetchone()
        if row is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # langchain_core marks loads() beta
            generations = loads(row[0], allowed_objects="core")
        for generation in generations:
            if isinstance(generation, ChatGeneration):
                metadata = dict(generation.message.response_metadata or {})
                generation.message.response_metadata = {**metadata, "cached": True}
        return generations

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        value = dumps(list(return_val))
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, generations) VALUES (?, ?)",
                (self._key(prompt, llm_string), value),
            )
            self._db.commit()

    def clear(self, **kwargs: Any) -> None:
        with self._lock:
            self._db.execute("DELETE FROM replies")
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])


_CACHES: dict[Path, ReplyCache] = {}
_CACHES_LOCK = threading.Lock()


def reply_cache(path: str | Path) -> ReplyCache:
    """One cache object per file and process."""
    key = Path(path).expanduser().resolve()
    with _CACHES_LOCK:
        if key not in _CACHES:
            _CACHES[key] = ReplyCache(key)
        return _CACHES[key]
