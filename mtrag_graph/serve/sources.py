"""Where a cited passage comes from: its text, title, file or URL and page, looked up by document id.

The chat state keeps the ids and titles of the passages an answer cites; the page shows the passage
itself. With ``--passages FILE`` the passages are the file's lines (any ``url``, ``page``, ``file`` or
``section`` or ``source`` field is kept); with ``--corpus INDEX`` they are read from the index through its
backend (the built-in index or Milvus: ``retrieval/backend.py``), which keeps a documents index's source
file, page and section with each passage.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mtrag_graph.retrieval.index import find_passage
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
    """Passages by document id: given rows, or the passages of the index (or indexes) in a folder."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), index_dir: str | Path | None = None) -> None:
        self._by_id = {row["document_id"]: row for row in rows}
        self._index_dir = Path(index_dir) if index_dir else None

    def get(self, document_id: str) -> dict[str, Any] | None:
        if document_id in self._by_id or self._index_dir is None:
            return self._by_id.get(document_id)
        found = find_passage(self._index_dir, document_id)
        if found is None:
            return None
        index, row = found
        if row.get("source") or row.get("url"):
            row.pop("file", None)  # the passage's own origin, not the index's file
        else:
            row["file"] = index.path.name  # the index (a corpus's domain)
        return row
