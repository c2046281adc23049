"""The rewrite stage (standalone rewrites of the last question): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.prompts import rewrite
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

# Words whose presence means the question leans on the previous exchange.
DEFAULT_PRONOUNS = (
    "it", "its", "it's", "this", "that", "these", "those", "they", "them", "their", "theirs",
    "he", "him", "his", "she", "her", "hers", "there", "such", "former", "latter", "same",
    "one", "ones", "above", "aforementioned", "then",
)  # fmt: skip

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
    resolve_fragments: bool = setting(
        True,
        stage="rewrite",
        description='Ask an elliptic turn ("And daily ones?", "How about lz4?") again as the previous question '
        'with its thing in place, a condition ("And if ...?") in place of its one "if" clause, a purpose ("And to '
        '...?") with a how-to question\'s way ("How do I ...?"), without a model call, when the place is sure '
        "(mtrag_graph.text.ellipsis); otherwise the rewrite model rewrites it.",
    )
    fragment_follow_ups: bool = setting(
        False,
        stage="rewrite",
        description='An elliptic turn ("What about bicycles?", text.ellipsis.is_fragment) is a continuation of the '
        "exchange before it (classify_relation asks no model, the history keeps that exchange), and one the "
        "rewrite model gives back adding no word of its own is rewritten again by the retry model.",
    )
    pronouns: tuple[str, ...] = setting(
        DEFAULT_PRONOUNS,
        stage="rewrite",
        description="Words whose presence means the question leans on the previous exchange (the global "
        "rewrite then sees only that exchange; clarify looks for what they refer to).",
    )
    rewrite_max_tokens: int = setting(64, stage="rewrite", description="Token limit of the global rewrite.")
    local_rewrite_max_tokens: int = setting(
        160, stage="rewrite", description="Token limit of the local rewrite (JSON)."
    )
    rewrite_system_prompt: str = setting(
        rewrite.SYSTEM,
        stage="rewrite",
        description="System text of the local rewrite and the relation judgements.",
    )
    global_rewrite_system_prompt: str = setting(
        rewrite.SYSTEM,
        stage="rewrite",
        description="System text of the global rewrite (research/rewrite_retrieval.py tries its rules here).",
    )
    global_rewrite_instruction: str = setting(
        rewrite.GLOBAL_REWRITE,
        stage="rewrite",
        description="The global rewrite's prompt ({conversation}, {question}) after its system text.",
    )
    local_rewrite_instruction: str = setting(
        rewrite.LOCAL_REWRITE,
        stage="rewrite",
        description="Asks for a summary, intent and standalone question from the selected history (JSON).",
    )
