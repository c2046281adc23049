"""The rewrite stage (standalone rewrites of the last question): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

register(
    Stage("rewrite", "Standalone rewrites of the last question.", nodes=("global_rewrite", "local_rewrite"),
          label="rewriting the question")
)  # fmt: skip


@dataclass(kw_only=True)
class RewriteSettings:
    rewrite_model: ModelSetting = setting(
        factory=settings.small_model,
        stage="rewrite",
        model=True,
        flag=True,
        description="Model for the global and local rewrites (default: MTRAG_SMALL_MODEL).",
    )
    rewrite_retry_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="rewrite",
        model=True,
        description="Model that rewrites again when the rewrite model's question still points back to the "
        "conversation, drops what the question asked, or is unusable (default: MTRAG_LARGE_MODEL; the "
        "rewrite model itself: no second try).",
    )
    rewrite_retry_on: Literal["misses", "doubts"] = setting(
        "misses",
        stage="rewrite",
        flag=True,
        description="When the retry model rewrites again. 'misses': the rewrite model's rewrite is unusable, still "
        "points back, or keeps under half of what was asked, and the retry's is taken when it has none of these; "
        "'doubts': any of the rewrite's doubts (mtrag_graph.nodes.rewrite.rewrite_doubts: also a yes/no question "
        "turned into a wh-question, under three quarters kept, nothing added to a question that points back), and "
        "the retry's is taken when it has fewer (off: real-documents tuning +1 follow-up, MTRAG-UN dev Task C one "
        "UNANSWERABLE turn more answered; benchmarks/results/documents.md).",
    )
    rewrite_keep_yes_no: bool = setting(
        True,
        stage="rewrite",
        flag=True,
        description='A yes/no question the rewrite model turned into a wh-question ("Does it suggest the correct '
        'spelling ...?" -> "What does the correct spelling ...?") is rewritten again by the retry model, whose '
        "rewrite is taken when it keeps the yes/no form and is otherwise usable (with 'misses'; 'doubts' covers it).",
    )
    rewrite_question: bool = setting(
        True,
        stage="rewrite",
        description="Rewrite the last question into a standalone one before retrieval and answering.",
    )
