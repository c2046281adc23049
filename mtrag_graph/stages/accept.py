"""The accept stage (the verdict on the draft: keep, retry once, decline): its registration and settings.

The decision is ``judging.verdict``; its node is ``accept_answer``. Each setting here changes what the
verdict does in a way a user can name; the rest of what it reads are constants of ``judging.verdict``
and the signal modules, with the figure that chose them beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph.prompts import grounded
from mtrag_graph.stages import Stage, register, setting

# content-word support a sentence needs (Context.grounding_min_support): the highest threshold that turns
# at most 3% of the tuning split's reference answers into "I don't know" and cuts a sentence from at most
# 25% of them (research/grounding_fit.py, benchmarks/results/answers.md)
DEFAULT_MIN_SUPPORT = 0.5

register(
    Stage("accept", "Decides what of the draft reaches the user: keep it, ask once more, or decline.",
          nodes=("accept_answer",), label="checking the answer", reads=("generate",))
)  # fmt: skip


@dataclass(kw_only=True)
class AcceptSettings:
    check_answers: bool = setting(
        True,
        stage="accept",
        description="Ask once more for a bad draft (empty, restates the question, cut off, ...), "
        "then decline; False: every draft but a decline is taken as it is.",
    )
    max_generate_retries: int = setting(
        1, stage="accept", description="Drafts asked again after a rejected one."
    )
    retry_declines: bool = setting(
        True,
        stage="accept",
        description="A whole-answer decline after a gate 'yes' is asked once more, for the part the "
        "documents support.",
    )
    grounding: Literal["facts", "whole", "off"] = setting(
        "whole",
        stage="accept",
        description="'facts': drop answer sentences whose numbers, names or commands the passages and "
        "conversation do not hold, or whose content-word support is below grounding_min_support (never a "
        "leading yes or no); 'whole': the same check, but the answer is shown whole (its unbacked "
        "sentences uncited) unless none of its claims is backed; 'off': no check.",
    )
    grounding_min_support: float = setting(
        DEFAULT_MIN_SUPPORT, stage="accept", description="Content-word support a sentence needs (0-1)."
    )
    verdict_combiner: str | None = setting(
        None,
        stage="accept",
        description="The fitted combiner that declines an answer the passages do not hold, from its support "
        "signals (judging.combiner; 'default': the shipped one, or a JSON file research.verdict_fit wrote); "
        "None: only an answer none of whose claims is backed is declined.",
    )
    sample_decline_threshold: float | None = setting(
        0.05,
        stage="accept",
        description="With retrieved passages, the answer is declined when the writer, offered 'I don't "
        "know', puts this much probability on a decline's first token; None: not asked.",
    )
    sample_instruction: str = setting(
        grounded.SAMPLE,
        stage="accept",
        description="The answer prompt (offering 'I don't know') whose decline probability is read.",
    )
    yes_no_quote: bool = setting(
        True,
        stage="accept",
        description="A yes/no answer gets the passage sentence closest to the question quoted after it "
        "(judging.yes_no); the draft itself is kept as written.",
    )
    howto_quote: bool = setting(
        True,
        stage="accept",
        flag=True,
        description="A how-to answer gets the passage sentence or code line holding its command quoted "
        "after it ('The document says: \u201c...\u201d'; judging.commands; no model call).",
    )
