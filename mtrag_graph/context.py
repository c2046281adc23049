"""Runtime configuration: ``Context``, every stage's settings in one object, with its defaults.

Each stage declares its settings beside its registration (``mtrag_graph/stages/<stage>.py``); ``Context``
is their union and adds nothing but the checks every setting shares and the presets.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from mtrag_graph.presets import DEFAULT_PRESET, load_preset
from mtrag_graph.stages import check_choices
from mtrag_graph.stages.accept import AcceptSettings
from mtrag_graph.stages.candidates import CandidatesSettings
from mtrag_graph.stages.clarify import ClarifySettings
from mtrag_graph.stages.common import CommonSettings
from mtrag_graph.stages.gate import GateSettings
from mtrag_graph.stages.generate import GenerateSettings
from mtrag_graph.stages.history import HistorySettings
from mtrag_graph.stages.relation import RelationSettings
from mtrag_graph.stages.rerank import RerankSettings
from mtrag_graph.stages.retrieval import RetrievalSettings
from mtrag_graph.stages.rewrite import RewriteSettings


# A dataclass takes its fields from its last base first: common's settings come first, the pipeline's
# order follows, the answer ensemble's come last (the order of the context schema and of --help).
@dataclass(kw_only=True)
class Context(
    CandidatesSettings,
    AcceptSettings,
    GenerateSettings,
    GateSettings,
    RerankSettings,
    RetrievalSettings,
    HistorySettings,
    RelationSettings,
    RewriteSettings,
    ClarifySettings,
    CommonSettings,
):
    """Models, thresholds and prompt text for one run of the graph: ``Context()`` is the default pipeline.

    The default is the pipeline every published figure describes (the ``ncl`` preset, which names no
    difference from it); presets are named differences (``Context.from_preset``). Each setting belongs to
    the stage that reads it (``mtrag_graph.stages``) and carries a description that LangGraph Studio and
    ``--help`` show. Model settings take a spec string (``mtrag_graph.models.factory``) or a chat model
    instance. Defaults from the environment (``MTRAG_SMALL_MODEL``, ``MTRAG_LARGE_MODEL``,
    ``MTRAG_EMBEDDER``, ``MTRAG_RERANKER``, ``MTRAG_INDEX_DIR``, ``MTRAG_N_CTX``) are read in
    ``mtrag_graph.settings``, the one place that reads ``MTRAG_*`` variables.
    """

    def __post_init__(self) -> None:
        check_choices(self)  # a setting typed Literal[...] holds one of its choices
        for stage_settings in Context.__bases__:  # a stage's own checks (candidates: presets, weights)
            own = vars(stage_settings).get("__post_init__")
            if own is not None:
                own(self)

    @classmethod
    def from_preset(cls, name_or_path: str | None = None, **overrides: Any) -> Context:
        """A Context with a preset's differences from the default (``ncl`` names none), then ``overrides`` (None values ignored)."""
        settings = dict(load_preset(name_or_path or DEFAULT_PRESET)["context"])
        settings.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_overrides(**settings)

    @classmethod
    def from_overrides(cls, **overrides: Any) -> Context:
        """A Context from keyword overrides, ignoring ``None`` values (CLI flags left unset)."""
        names = {f.name for f in fields(cls)}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"unknown Context fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in overrides.items() if v is not None})
