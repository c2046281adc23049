"""Where a cited passage comes from: its text, title, file or URL and page, looked up by document id.

The chat state keeps the ids and titles of the passages an answer cites; the page shows the passage
itself. With ``--passages FILE`` the passages are the file's lines (any ``url``, ``page``, ``file`` or
``section`` or ``source`` field is kept); with ``--corpus INDEX`` they are the index's ``passages.jsonl``
files (a documents index keeps each passage's source file, page and section there), read on first use.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SOURCE_FIELDS = ("url", "page", "section", "file", "source")


def read_source_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every passage of a JSON-lines file with the fields the page shows."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise ValueError(f"{path}, line {number}: expected an object with a 'text' string")
            entry = {
                "document_id": str(row.get("document_id", row.get("_id", f"passage-{number}"))),
                "title": row.get("title") or "",
                "text": row["text"],
            }
            entry.update({key: row[key] for key in SOURCE_FIELDS if row.get(key) not in (None, "")})
            if "file" not in entry and "url" not in entry:
                entry["file"] = Path(path).name
            rows.append(entry)
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
