"""What the candidate generators, the judge and the retry share: which candidate is active, its prompt."""

from __future__ import annotations

import re
from typing import Any

from mtrag_graph.candidates import Candidate
from mtrag_graph.context import Context
from mtrag_graph.exemplars import load_exemplars
from mtrag_graph.nodes._common import format_conversation
from mtrag_graph.prompts import answer_variants as prompts

_CITATION = re.compile(r"\s*\[(?:Passage|Document)s?\s*\d+(?:\s*(?:,|and)\s*\d+)*\]", re.IGNORECASE)


def active_candidate(state: dict[str, Any], context: Context) -> Candidate:
    """The configured candidate the single generate node (and a retry after the judge) uses."""
    if not context.candidates:
        return Candidate(model=context.generate_model)
    return context.candidates[state.get("chosen_candidate") or 0]


def strip_citations(text: str) -> str:
    return _CITATION.sub("", text).strip()


def _render_examples(context: Context) -> str:
    rendered = []
    for n, example in enumerate(load_exemplars(context.exemplars_file), start=1):
        answer = example["answer"] if example["passage"] else context.idk_answer
        rendered.append(
            prompts.EXAMPLE.format(
                n=n,
                documents=example["passage"] or "(none)",
                conversation=format_conversation(example["history"]) or "(first turn)",
                question=example["question"],
                answer=answer,
            )
        )
    return "\n\n".join(rendered)


def candidate_tail(candidate: Candidate, question: str, context: Context) -> str:
    """The instruction after the shared prefix for one candidate's first attempt."""
    idk = context.idk_answer
    if candidate.variant == "extractive":
        return prompts.EXTRACTIVE.format(question=question, idk=idk)
    if candidate.variant == "fewshot":
        return prompts.FEWSHOT.format(
            examples=_render_examples(context), base=prompts.FEWSHOT_BASE.format(idk=idk), question=question
        )
    if candidate.variant == "citation":
        return prompts.CITATION.format(question=question, idk=idk)
    return context.generate_instruction.format(question=question, idk=idk)


def finish_text(candidate: Candidate, text: str, context: Context) -> str:
    """The candidate's reply as an answer: citation markers stripped unless configured to keep them."""
    if candidate.variant == "citation" and context.citation_markers == "strip":
        return strip_citations(text)
    return text
