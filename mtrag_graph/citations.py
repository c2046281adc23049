"""Which passages back which sentence of the answer.

The grounding check (``state["grounding"]``, written by its node where the graph has one) gives, for
each answer sentence, whether the kept passages support it and which ones do. Where a state has no
grounding, ``sentence_citations`` builds the same list from the judging layer's claim support
(``judging.support.claim_support``: the share of a sentence's content-word stems found in a passage),
with no model call. ``answer_citations`` picks the one that applies; the prediction file, the trace and
the chat show its result.

Each sentence: ``{"text", "supported", "passages" (indices into kept_passages), "document_ids",
"score"}``; ``score`` is the sentence's support by all the kept passages together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mtrag_graph.judging.support import claim_support
from mtrag_graph.judging.text import sentences

SUPPORTED_SHARE = 0.6  # a sentence is supported when this share of its content words is in the passages
CITED_SHARE = 0.5  # a passage is cited for a sentence when it alone holds this share of its content words


def sentence_citations(answer: str, passages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each answer sentence with the passages that support it (indices into ``passages``)."""
    texts = [str(p.get("text", "")) for p in passages]
    rows = []
    for sentence in sentences(answer):
        per_passage = claim_support(sentence, texts)
        score = claim_support(sentence, [" ".join(texts)])[0] if texts else 0.0
        cited = sorted(
            (i for i, share in enumerate(per_passage) if share >= CITED_SHARE),
            key=lambda i: -per_passage[i],
        )
        if not cited and score >= SUPPORTED_SHARE:  # supported only by passages together: cite the best
            cited = [max(range(len(texts)), key=per_passage.__getitem__)]
        rows.append(
            {
                "text": sentence,
                "supported": score >= SUPPORTED_SHARE,
                "passages": cited,
                "document_ids": [str(passages[i].get("document_id")) for i in cited],
                "score": round(score, 3),
            }
        )
    return rows


def answer_citations(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer's sentences with their passages: the grounding check's, else ``sentence_citations``.

    An abstention ("I don't know") or a clarifying question cites nothing.
    """
    grounding = state.get("grounding")
    if isinstance(grounding, Mapping) and grounding.get("sentences") is not None:
        return list(grounding["sentences"])
    if state.get("abstain_reason") or (state.get("clarification") or {}).get("asked"):
        return []
    return sentence_citations(str(state.get("answer") or ""), state.get("kept_passages") or [])


def cited_answer(answer_sentences: Sequence[Mapping[str, Any]]) -> tuple[str, list[int]]:
    """The sentences with markers ``[1]``, ``[2]`` after each, numbering passages in order of first
    citation; also the kept-passage index of each number."""
    numbers: dict[int, int] = {}
    parts = []
    for sentence in answer_sentences:
        marks = "".join(f"[{numbers.setdefault(i, len(numbers) + 1)}]" for i in sentence["passages"])
        parts.append(f"{sentence['text']} {marks}".rstrip())
    return " ".join(parts), list(numbers)
