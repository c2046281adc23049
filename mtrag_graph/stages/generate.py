"""The generate stage (the answer): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.prompts import grounded
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

register(
    Stage("generate", "Writes the answer from the kept passages.", nodes=("generate",),
          label="writing the answer")
)  # fmt: skip


@dataclass(kw_only=True)
class GenerateSettings:
    generate_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="generate",
        model=True,
        flag=True,
        description="Model that writes the answer (default: MTRAG_LARGE_MODEL).",
    )
    answer_max_tokens: int = setting(220, stage="generate", description="Token limit of an answer.")
    first_draft: Literal["may_decline", "answer"] = setting(
        "answer",
        stage="generate",
        flag=True,
        description="After a gate 'yes': 'may_decline': the first draft may reply I don't know, and such a "
        "decline is asked once more without that way out (two drafts); 'answer': the first draft is asked "
        "with the decline retry's instruction at once (one draft; a decline it still writes is taken).",
    )
    answer_question: Literal["rewrite", "both", "doubtful"] = setting(
        "rewrite",
        stage="generate",
        flag=True,
        description="The question the answering prompts (gate, answer, samples) show: 'rewrite': the standalone "
        "rewrite; 'both': on a follow-up whose rewrite differs from what the user wrote, the user's words "
        "first, then the rewrite ('... (in full: ...)'), so a rewrite that lost or changed what was asked "
        "does not replace it; 'doubtful': 'both' only where the rewrite is in doubt (``rewrite_doubts``: it "
        "changed a yes/no question into a wh-question, kept under three quarters of what was asked, or added "
        "nothing to a question that points back).",
    )
    answer_conversation: Literal["selected", "questions", "none"] = setting(
        "selected",
        stage="generate",
        flag=True,
        description="The conversation the answering prompts (gate, answer, samples, checks) show: 'selected': "
        "the turns the history stage kept; 'questions': only the user's turns of them, the agent's earlier "
        "answers left out (a follow-up cannot be answered by copying the answer before it); 'none': no "
        "conversation (the question the prompts show carries what the turn refers to). 'questions' lost "
        "follow-ups on the real-documents fresh split (8 -> 3 of 21 right, declined more; "
        "benchmarks/results/answers.md).",
    )
    generate_instruction: str = setting(
        grounded.GENERATE, stage="generate", description="Asks for the answer."
    )
    strict_generate_instruction: str = setting(
        grounded.GENERATE_STRICT,
        stage="generate",
        description="Asks again after a draft with problems ({problems}).",
    )
    decline_retry_instruction: str = setting(
        grounded.GENERATE_AFTER_DECLINE,
        stage="generate",
        description="Asks again after a decline that followed a gate 'yes' ('': the strict instruction).",
    )
