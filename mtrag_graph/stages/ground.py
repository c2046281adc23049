"""The ground stage (drop what the passages do not back): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph.prompts import grounded
from mtrag_graph.stages import Stage, register, setting

# content-word support a sentence needs (Context.grounding_min_support): the highest threshold that turns
# at most 3% of the tuning split's reference answers into "I don't know" and cuts a sentence from at most
# 25% of them (research/grounding_fit.py, benchmarks/results/trust.md)
DEFAULT_MIN_SUPPORT = 0.5

register(
    Stage("ground", "Drops answer sentences the passages do not back.", nodes=("ground_answer",),
          label="checking the answer", reads=("generate",))
)  # fmt: skip


@dataclass(kw_only=True)
class GroundSettings:
    grounding: Literal["facts", "off"] = setting(
        "facts",
        stage="ground",
        description="'facts': drop answer sentences whose numbers or names the passages and conversation do "
        "not hold, or whose content-word support is below grounding_min_support; 'off': no check.",
    )
    grounding_min_support: float = setting(
        DEFAULT_MIN_SUPPORT, stage="ground", description="Content-word support a sentence needs (0-1)."
    )
    verify_retried_answers: Literal["off", "retrieved", "always"] = setting(
        "off",
        stage="ground",
        description="Ask the model to confirm an answer written only by the decline retry: 'off', "
        "'retrieved' (retrieved passages only) or 'always'.",
    )
    verify_threshold: float = setting(
        0.5, stage="ground", description="The yes-probability a verified answer needs."
    )
    verifier: str = setting(
        "bundled",
        stage="ground",
        description="The answer verifier, a cross-encoder trained for 'does this passage state the answer' "
        "(docs/verifier.md): 'bundled' (the shipped weights), the path of a weights file, or 'fixed:P' "
        "(every answer scores P; for tests).",
    )
    verifier_threshold: float | None = setting(
        None,
        stage="ground",
        description="An answer none of whose cited passages the verifier scores at this (0-1) becomes a "
        "decline (not_stated); None: the verifier is not asked.",
    )
    # 0: on the real-documents tuning split, ten replies a task drawn once (research.samples_rule), the
    # rule "2 of 3 disagree" was expected to lose 3.8 of 40 right answers for 0.1 answered unanswerable
    # questions and 1.1 wrong answers declined; no k-of-n rule up to 8 of 10 separated them (one live run
    # lost 5 right answers). The decline probability below, on the same prompt, keeps its gain alone.
    answer_samples: int = setting(
        0,
        stage="ground",
        description="Replies sampled from the answer prompt (with 'I don't know' offered) to check the answer "
        "against: one that declines, or names none of the answer's facts, disagrees (0: no samples).",
    )
    samples_needed: int = setting(
        2,
        stage="ground",
        description="Samples that must disagree with the answer before the run declines (model_unsure).",
    )
    sample_decline_threshold: float | None = setting(
        0.05,
        stage="ground",
        description="The answer is a decline when the samples' prompt puts this much probability on a "
        "decline's first token (the share of samples that would decline); None: not asked.",
    )
    # 'retrieved': on MTRAG-UN dev Task B (reference passages, whose UNANSWERABLE turns come without any)
    # the samples only cost ANSWERABLE HM3 (-0.068 [-0.149, +0.000], 3 answers declined); with retrieved
    # passages they decline 3 more of 28 UNANSWERABLE turns (benchmarks/results/documents.md)
    sample_scope: Literal["retrieved", "always"] = setting(
        "retrieved",
        stage="ground",
        description="Which answers are sampled: 'retrieved' (retrieved passages only) or 'always'.",
    )
    sample_temperature: float = setting(0.8, stage="ground", description="Temperature of the samples.")
    sample_max_tokens: int = setting(24, stage="ground", description="Token limit of one sample.")
    sample_instruction: str = setting(
        grounded.SAMPLE,
        stage="ground",
        description="The answer prompt's instruction for the samples (offers 'I don't know').",
    )
    yes_no_quote: bool = setting(
        True,
        stage="ground",
        description="A yes/no question's answer quotes the passage sentence closest to the question; the model, "
        "shown only that quote, leads it with yes or no when at least yes_no_min_confidence sure, and the "
        "draft stays before the quote only when it says the same (judging.yes_no).",
    )
    howto_quote: bool = setting(
        True,
        stage="ground",
        flag=True,
        description="A how-to answer the grounding check kept gets the passage sentence or code line holding its "
        "draft's command, quoted after it ('The document says: \u201c...\u201d'; judging.commands; no model call).",
    )
    yes_no_min_confidence: float = setting(
        0.9, stage="ground", description="The probability a yes or no verdict on the quote needs to be said."
    )
    yes_no_quote_from: Literal["question", "question+draft"] = setting(
        "question",
        stage="ground",
        description="What ranks the passage sentences for a yes/no answer's quote: 'question' (its cosine with "
        "the question) or 'question+draft' (that plus the cosine with the draft, its yes or no left out: the "
        "sentence the draft rests on).",
    )
    yes_no_keep_no: bool = setting(
        True,
        stage="ground",
        description="Without a sure verdict on the quote, a draft that opens with 'No' stays before the quote "
        "(the 1.5B leans to 'yes': of its real-documents yes/no drafts left to the quote, the two 'No' ones "
        "were right; benchmarks/results/rereading.md). False: the quote alone.",
    )
    verify_instruction: str = setting(
        grounded.VERIFY_ANSWER,
        stage="ground",
        description="Asks whether the documents state the answer (yes/no).",
    )
