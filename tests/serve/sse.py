"""Server-sent events read from a response's lines, as (event, data) pairs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def read_events(lines: Iterable[str]) -> list[tuple[str, Any]]:
    found, kind = [], None
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: ") and kind is not None:
            found.append((kind, json.loads(line[6:])))
            kind = None
    return found
