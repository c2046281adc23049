"""Answer candidates of the ensemble (the one thing called "candidates"): (model spec, prompt variant) pairs and their presets.

A candidate preset is a JSON file in ``mtrag_graph/presets/candidates`` (``{"description": ..., "candidates": [...]}``,
each candidate ``{"model": SPEC, "variant": NAME, "name": LABEL}``); ``load_candidates`` takes a preset
name or a path to such a file. The order of the list is the prior order: ties in the judge's scores,
and a judge that fails, go to the earlier candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mtrag_graph.answers import strip_citations
from mtrag_graph.models.factory import ModelSpec, model_name
from mtrag_graph.presets import CANDIDATES, read_preset

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

    def finish(self, text: str, citation_markers: str) -> str:
        """The reply as an answer: citation markers stripped unless configured to keep them."""
        if self.variant == "citation" and citation_markers == "strip":
            return strip_citations(text)
        return text

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


def load_candidates(preset_or_file: str) -> tuple[Candidate, ...]:
    """The candidates of a bundled candidate preset (by name) or of a JSON file (by path)."""
    data = read_preset(preset_or_file, CANDIDATES)
    items = data["candidates"] if isinstance(data, dict) else data
    candidates = tuple(Candidate.coerce(item) for item in items)
    if not candidates:
        raise ValueError(f"candidate preset '{preset_or_file}' lists no candidates")
    return candidates
