"""Where a cited passage comes from: its text, title, file or URL and page, looked up by document id.

The chat state keeps the ids and titles of the passages an answer cites; the page shows the passage
itself. With ``--passages FILE`` the passages are the file's lines (any ``url``, ``page``, ``file`` or
``section`` or ``source`` field is kept); with ``--corpus INDEX`` they are the index's ``passages.jsonl``
files (a documents index keeps each passage's source file, page and section there), read on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mtrag_graph.runtime.chat import read_passages


def read_source_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every passage of a JSON-lines file with the fields the page shows (its file when it names no
    origin of its own)."""
    rows = read_passages(path)
    for row in rows:
        if "file" not in row and "url" not in row:
            row["file"] = Path(path).name
    return rows


class SourceCatalog:
    """Passages by document id: given rows, or the ``passages.jsonl`` files under an index folder."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), index_dir: str | Path | None = None) -> None:
        self._by_id = {row["document_id"]: row for row in rows}
        self._index_dir = Path(index_dir) if index_dir else None
        self._loaded = self._index_dir is None
        self._lock = threading.Lock()

    def _load_index(self) -> None:
        with self._lock:
            if self._loaded or self._index_dir is None:
                return
            for path in sorted(self._index_dir.glob("**/passages.jsonl")):
                for row in read_source_rows(path):
                    if row.get("source") or row.get("url"):
                        row.pop("file", None)  # the passage's own origin, not the index's file
                    else:
                        row["file"] = path.parent.name  # the index (a corpus's domain)
                    self._by_id.setdefault(row["document_id"], row)
            self._loaded = True

    def get(self, document_id: str) -> dict[str, Any] | None:
        if not self._loaded:
            self._load_index()
        return self._by_id.get(document_id)
