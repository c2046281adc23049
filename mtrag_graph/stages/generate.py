"""The generate stage (the answer): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.prompts import answer_variants, grounded
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
    answer_mode: Literal["direct", "evidence_first"] = setting(
        "direct",
        stage="generate",
        description="'direct': answer at once; 'evidence_first': quote the answering passage sentences, "
        "then answer from them (a quote the passages do not hold makes it a decline).",
    )
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
        "benchmarks/results/reading.md).",
    )
    generate_instruction: str = setting(
        grounded.GENERATE, stage="generate", description="Asks for the answer."
    )
    strict_generate_instruction: str = setting(
        grounded.GENERATE_STRICT,
        stage="generate",
        description="Asks again after a draft with problems ({problems}).",
    )
    evidence_first_instruction: str = setting(
        grounded.GENERATE_EVIDENCE_FIRST,
        stage="generate",
        description="The answer_mode 'evidence_first' instruction.",
    )
    decline_retry_instruction: str = setting(
        grounded.GENERATE_AFTER_DECLINE,
        stage="generate",
        description="Asks again after a decline that followed a gate 'yes' ('': the strict instruction).",
    )
    extractive_instruction: str = setting(
        answer_variants.EXTRACTIVE,
        stage="generate",
        description="The 'extractive' prompt variant of a candidate.",
    )
    fewshot_instruction: str = setting(
        answer_variants.FEWSHOT, stage="generate", description="The 'fewshot' prompt variant of a candidate."
    )
    fewshot_rules_instruction: str = setting(
        answer_variants.FEWSHOT_BASE, stage="generate", description="The rules before the few-shot examples."
    )
    fewshot_example_template: str = setting(
        answer_variants.EXAMPLE, stage="generate", description="How one few-shot example is shown."
    )
    citation_instruction: str = setting(
        answer_variants.CITATION,
        stage="generate",
        description="The 'citation' prompt variant of a candidate.",
    )
    citation_markers: Literal["strip", "keep"] = setting(
        "strip",
        stage="generate",
        description="The citation variant's [Passage N] markers: 'strip' or 'keep'.",
    )
    exemplars_file: str | None = setting(
        None, stage="generate", description="Few-shot exemplars (None: the file shipped in the package)."
    )
