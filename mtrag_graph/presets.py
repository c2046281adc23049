"""Pipeline presets: data files of Context overrides (``mtrag_graph/presets/<name>.json`` or any path)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context


def preset_names() -> list[str]:
    folder = resources.files("mtrag_graph") / "presets"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load_preset(name_or_path: str) -> dict[str, Any]:
    """The preset's JSON: ``{"description": ..., "context": {field: value}, "nodes": [optional nodes]}``."""
    path = Path(name_or_path)
    if path.suffix == ".json" and path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        resource = resources.files("mtrag_graph") / "presets" / f"{name_or_path}.json"
        if not resource.is_file():
            raise ValueError(f"unknown preset '{name_or_path}': use one of {preset_names()} or a .json path")
        text = resource.read_text(encoding="utf-8")
    preset = json.loads(text)
    if not isinstance(preset.get("context"), dict):
        raise ValueError(f"preset '{name_or_path}' needs a 'context' object of Context fields")
    return preset


NODES = {"clarify": "mtrag_graph.nodes.clarify:CLARIFY"}


def preset_insertions(name_or_path: str) -> list:
    """The optional nodes a preset switches on (``"nodes": ["clarify"]``), as graph insertions."""
    import importlib

    insertions = []
    for name in load_preset(name_or_path).get("nodes", []):
        if name not in NODES:
            raise ValueError(f"preset '{name_or_path}': unknown node '{name}' (known: {sorted(NODES)})")
        module, _, attribute = NODES[name].partition(":")
        insertions.append(getattr(importlib.import_module(module), attribute))
    return insertions


def context_from_preset(name_or_path: str, **overrides: Any) -> Context:
    """A Context with the preset's settings, then ``overrides`` (None values ignored) on top."""
    settings = dict(load_preset(name_or_path)["context"])
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return Context.from_overrides(**settings)
