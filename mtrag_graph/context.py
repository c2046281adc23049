"""Runtime configuration: every tunable of the graph, with defaults and environment fallbacks."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from mtrag_graph.models.factory import ModelSpec
from mtrag_graph.prompts import grounded, rewrite

SMALL_MODEL = "qwen2.5-coder-0.5b"
LARGE_MODEL = "qwen2.5-coder-1.5b"

# Words whose presence means the question leans on the previous exchange.
DEFAULT_PRONOUNS = (
    "it", "its", "it's", "this", "that", "these", "those", "they", "them", "their", "theirs",
    "he", "him", "his", "she", "her", "hers", "there", "such", "former", "latter", "same",
    "one", "ones", "above", "aforementioned", "then",
)  # fmt: skip


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


@dataclass(kw_only=True)
class Context:
    """Models, thresholds and prompt text for one run of the graph.

    Model fields take a spec string (see ``mtrag_graph.models.factory``) or a chat model instance.
    Environment fallbacks: ``MTRAG_SMALL_MODEL`` (rewrite, classify), ``MTRAG_LARGE_MODEL`` (gate,
    generate), ``MTRAG_EMBEDDER``, ``MTRAG_RERANKER``, ``MTRAG_INDEX_DIR``.
    """

    rewrite_model: ModelSpec = field(default_factory=lambda: _env("MTRAG_SMALL_MODEL", SMALL_MODEL))
    classify_model: ModelSpec = field(default_factory=lambda: _env("MTRAG_SMALL_MODEL", SMALL_MODEL))
    gate_model: ModelSpec = field(default_factory=lambda: _env("MTRAG_LARGE_MODEL", LARGE_MODEL))
    generate_model: ModelSpec = field(default_factory=lambda: _env("MTRAG_LARGE_MODEL", LARGE_MODEL))
    embedder: str = field(default_factory=lambda: _env("MTRAG_EMBEDDER", "minilm"))
    reranker: str = field(default_factory=lambda: _env("MTRAG_RERANKER", "embedding"))

    top_k: int = 5
    history_walk_cap: int = 3
    pronouns: tuple[str, ...] = DEFAULT_PRONOUNS
    idk_answer: str = "I don't know the answer based on the provided documents."
    gate_fallback: str = "yes"  # used when the gate's reply never parses (recorded in `fallbacks`)
    parse_retries: int = 2
    answer_max_tokens: int = 220
    rewrite_max_tokens: int = 64
    local_rewrite_max_tokens: int = 160
    min_answer_words: int = 3
    max_generate_retries: int = 1
    passage_max_chars: int = 2000  # each passage is cut to this many characters in prompts

    # full-RAG retrieval
    index_dir: str | None = field(default_factory=lambda: os.environ.get("MTRAG_INDEX_DIR"))
    retrieval_top_k: int = 20
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60

    # prompt text (any of it can be overridden per run)
    grounded_system_prompt: str = grounded.SYSTEM
    generate_instruction: str = grounded.GENERATE
    strict_generate_instruction: str = grounded.GENERATE_STRICT
    gate_instruction: str = grounded.GATE
    rewrite_system_prompt: str = rewrite.SYSTEM

    @classmethod
    def from_overrides(cls, **overrides: Any) -> Context:
        """A Context from keyword overrides, ignoring ``None`` values (CLI flags left unset)."""
        names = {f.name for f in fields(cls)}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"unknown Context fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in overrides.items() if v is not None})
