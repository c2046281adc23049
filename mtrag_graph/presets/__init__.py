"""Presets are data: JSON files shipped in ``mtrag_graph/presets/`` (or any ``.json`` path).

Two kinds: pipeline presets (``presets/<name>.json``: ``{"description": ..., "context": {field: value}}``,
loaded by ``Context.from_preset``) and candidate presets for the answer ensemble
(``presets/candidates/<name>.json``: ``{"description": ..., "candidates": [...]}``, loaded by
``mtrag_graph.stages.candidates.load_candidates``).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

DEFAULT_PRESET = "ncl"
PIPELINE = "presets"
CANDIDATES = "presets/candidates"
_KIND_NAMES = {PIPELINE: "preset", CANDIDATES: "candidate preset"}


def preset_names(kind: str = PIPELINE) -> list[str]:
    """The bundled presets of ``kind`` (``PIPELINE`` or ``CANDIDATES``), by name."""
    folder = resources.files("mtrag_graph").joinpath(*kind.split("/"))
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def read_preset(name_or_path: str, kind: str = PIPELINE) -> Any:
    """The parsed JSON of a bundled preset (by name) or of a ``.json`` file (by path)."""
    path = Path(name_or_path)
    if path.suffix == ".json" and path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    resource = resources.files("mtrag_graph").joinpath(*kind.split("/"), f"{name_or_path}.json")
    if not resource.is_file():
        raise ValueError(
            f"unknown {_KIND_NAMES[kind]} '{name_or_path}': use one of {', '.join(preset_names(kind))} "
            "or a .json path"
        )
    return json.loads(resource.read_text(encoding="utf-8"))


def load_preset(name_or_path: str) -> dict[str, Any]:
    """A pipeline preset: ``{"description": ..., "context": {field: value}}``."""
    preset = read_preset(name_or_path, PIPELINE)
    if not isinstance(preset, dict) or not isinstance(preset.get("context"), dict):
        raise ValueError(f"preset '{name_or_path}' needs a 'context' object of Context fields")
    if "nodes" in preset:
        raise ValueError(
            f"preset '{name_or_path}': 'nodes' is no longer read; switch clarify on with "
            '"context": {"clarify": true}'
        )
    return preset
