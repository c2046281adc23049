"""Answer candidates for the ensemble branch: (model spec, prompt variant) pairs and their presets.

A candidate preset is a JSON file in ``mtrag_graph/presets/candidates`` (``{"description": ..., "candidates": [...]}``,
each candidate ``{"model": SPEC, "variant": NAME, "name": LABEL}``); ``load_candidates`` takes a preset
name or a path to such a file. The order of the list is the prior order: ties in the judge's scores,
and a judge that fails, go to the earlier candidate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from mtrag_graph.models.factory import ModelSpec, model_name

VARIANTS = ("default", "extractive", "fewshot", "citation")


@dataclass(frozen=True)
class Candidate:
    """One answer generator: a model and the prompt variant it is asked with."""

    model: ModelSpec
    variant: str = "default"
    name: str | None = None

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown prompt variant '{self.variant}': use one of {', '.join(VARIANTS)}")

    @property
    def label(self) -> str:
        return self.name or f"{model_name(self.model)}/{self.variant}"

    @classmethod
    def coerce(cls, value: Any) -> Candidate:
        if isinstance(value, Candidate):
            return value
        if isinstance(value, dict):
            unknown = set(value) - {"model", "variant", "name"}
            if unknown or "model" not in value:
                raise ValueError(f"a candidate is {{'model', 'variant', 'name'}}, got {sorted(value)}")
            return cls(**value)
        if isinstance(value, str):  # "SPEC" or "SPEC#variant"
            spec, _, variant = value.partition("#")
            return cls(model=spec, variant=variant or "default")
        raise ValueError(f"not a candidate: {value!r}")


def preset_names() -> list[str]:
    folder = resources.files("mtrag_graph") / "presets" / "candidates"
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


def load_candidates(preset_or_file: str) -> tuple[Candidate, ...]:
    """The candidates of a bundled preset (by name) or of a JSON file (by path)."""
    path = Path(preset_or_file)
    if path.suffix == ".json" and path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        bundled = resources.files("mtrag_graph") / "presets" / "candidates" / f"{preset_or_file}.json"
        if not bundled.is_file():
            known = ", ".join(preset_names())
            raise ValueError(f"no candidate preset '{preset_or_file}': give a JSON file or one of {known}")
        text = bundled.read_text(encoding="utf-8")
    data = json.loads(text)
    items = data["candidates"] if isinstance(data, dict) else data
    candidates = tuple(Candidate.coerce(item) for item in items)
    if not candidates:
        raise ValueError(f"candidate preset '{preset_or_file}' lists no candidates")
    return candidates
