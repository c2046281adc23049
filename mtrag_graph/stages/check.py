"""The check stage (reject bad answers): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph.stages import Stage, register, setting

register(
    Stage("check", "Cleans the answer and rejects bad ones (one retry, then abstain).",
          nodes=("check_answer",), label="checking the answer")
)  # fmt: skip


@dataclass(kw_only=True)
class CheckSettings:
    check_answers: bool = setting(
        True,
        stage="check",
        description="Reject bad answers (empty, too short, restates the question, cut off, ...) and retry.",
    )
    min_answer_words: int = setting(
        3, stage="check", description="An answer shorter than this (not yes/no) is a problem."
    )
    max_generate_retries: int = setting(
        1, stage="check", description="Drafts asked again after a rejected one."
    )
    reread_declines: bool = setting(
        False,
        stage="check",
        description="A run about to decline after a gate 'yes' (the model declined, or the retry failed) asks "
        "once more over the kept passages whole instead of their excerpts, with decline_instruction (a plain "
        "request with 'I don't know' offered); that draft is checked like any other. Off: real-documents fresh "
        "+1 right, tuning two declines turned into invented facts and one unanswerable question answered "
        "(benchmarks/results/rereading.md).",
    )
    general_terms: Literal["off", "retrieved", "always"] = setting(
        "retrieved",
        stage="check",
        description="A draft in general terms none of the passages uses ('can vary depending on several "
        "factors', 'typically', 'you can consider'; text.answers.general_terms) is a problem: retried once, "
        "then declined (failed_retry). 'retrieved': with retrieved passages only (MTRAG-UN dev Task C: 2 more "
        "of 28 UNANSWERABLE turns declined, HM3 +0.018 [+0.000, +0.045]; with the reference passages of Task B, "
        "whose UNANSWERABLE turns carry none, it only declined a PARTIAL turn, -0.004 [-0.012, +0.000]); "
        "'always'; 'off' (benchmarks/results/general-terms.md).",
    )
    decline_repeats: bool = setting(
        True,
        stage="check",
        description="A follow-up's draft that, asked again, still gives the previous answer (its values, or "
        "most of its words) is declined (failed_retry) instead of taken as the passages' one answer for both turns.",
    )
    retry_declines: bool = setting(
        True,
        stage="check",
        description="With given passages, a whole-answer decline after a gate 'yes' is retried once, "
        "asking for the part the documents support.",
    )
    retry_declines_retrieved: bool = setting(
        True,
        stage="check",
        description="The same with retrieved passages (full RAG); decided apart (benchmarks/results/trust.md).",
    )
