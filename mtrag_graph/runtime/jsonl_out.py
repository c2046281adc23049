"""Crash-safe JSON-lines output: one line per record, flushed and fsynced; resumable.

A process killed mid-write can leave a torn last line. ``open_resumable`` cuts it off (it is
redone) and returns the keys of the complete lines, so a restarted run writes exactly one line per
record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO


class JsonlWriter:
    def __init__(self, handle: TextIO):
        self._handle = handle

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_resumable(
    path: str | Path, key: Callable[[dict[str, Any]], str | None]
) -> tuple[JsonlWriter, dict[str, dict[str, Any]]]:
    """Open ``path`` for appending after dropping a torn tail; return the complete records by key."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    done: dict[str, dict[str, Any]] = {}
    if path.exists():
        with open(path, "rb") as handle:
            data = handle.read()
        lines = data.splitlines(keepends=True)
        for index, raw in enumerate(lines):
            last = index == len(lines) - 1
            try:
                record = json.loads(raw) if raw.endswith(b"\n") or not last else None
            except json.JSONDecodeError:
                record = None
            if record is None and last:
                # torn last line, written partly before a crash: cut it off, it is redone
                with open(path, "r+b") as handle:
                    handle.truncate(len(data) - len(raw))
            elif isinstance(record, dict) and (k := key(record)) is not None:
                done[k] = record
    return JsonlWriter(open(path, "a", encoding="utf-8")), done
