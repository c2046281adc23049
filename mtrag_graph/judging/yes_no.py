"""A yes/no answer that quotes the sentence deciding it.

A small model asked a yes/no question over whole passages says "Yes" too often: on the real-documents
tuning split two of its three answerable yes/no questions were answered "Yes" where the passage it
cited says the opposite ("qsolve only supports homogeneous linear systems"). Shown only that sentence,
the 1.5B model was no surer (yes 0.50 / no 0.49 on it), so its yes or no is not what the user should
rely on; the sentence is. A yes/no answer is settled after the draft:

1. the quote: the passages' sentences (``passage_sentences``: PDF lines joined, list items kept apart)
   ranked by the embedder's cosine with the question; the best one, with the second when it is from the
   same passage and nearly as close;
2. the model reads the quote alone ("going only by this sentence, yes or no?", one constrained token
   and its probabilities): its verdict (when at least ``min_confidence`` sure) and whether it agrees with
   the draft's own yes or no are recorded, a signal for the answer's verdict;
3. the quote is added after the draft ("... The document says: “...”"). The draft is never turned over
   nor replaced: on answers people wrote (the reference-writer benchmark) the model's verdict on the
   quote turned a right "Yes, I have. ..." into "No." and replaced others by the quote alone.

The grounding check then cites the quote's passage. The record (candidates, quote, probabilities,
outcome) is kept in ``grounding["yes_no"]``. Cost: one embedding batch and one short model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.text import declines
from mtrag_graph.text.answers import is_yes_no_question

VERDICTS = ("yes", "no", "unclear")
SENTENCE_CHARS = 400  # a longer "sentence" (a table, a run-on PDF line) is cut to this in the prompt
MIN_WORDS = 4  # shorter pieces (headings, page numbers) are not candidates

SYSTEM = "You read one sentence from a document and say whether it answers a yes/no question."
INSTRUCTION = (
    "Sentence: \u201c{sentence}\u201d\n\n"
    "Question: {question}\n\n"
    "Going only by this sentence, is the answer to the question yes or no? Reply with one word: "
    "yes, no, or unclear (the sentence does not say)."
)
LEAD = {"yes": "Yes", "no": "No"}
QUOTE = "The document says: \u201c{sentence}\u201d"
QUOTE_FROM = ("question", "question+draft")  # what the quoted sentence is ranked by
SECOND_WITHIN = 0.1  # the second-best sentence joins the quote when its cosine is this close
_LEADING = re.compile(r"^\W*(yes|no)\b[,.;:!]?\s*", re.IGNORECASE)  # the yes or no and its punctuation

_LINE_START_KEEP = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6]|\d+[.)]\s|#|\||```|\$ |>)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"\u201d')\]]*\s+(?=[\"\u201c'(\[`]?[A-Z0-9])")
_SPACE = re.compile(r"[ \t]+")


def passage_sentences(text: str) -> list[str]:
    """The sentences of a passage: a paragraph's broken lines (PDF text) joined, a list item, heading,
    table row or code line kept on its own, then split at sentence ends. A question is no candidate: it
    decides nothing (an FAQ's "Do I need the tkinter package ...?" was quoted as the answer to "Is the
    tkinter package required ...?")."""
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        current: list[str] = []
        for line in paragraph.splitlines():
            if not line.strip():
                continue
            if _LINE_START_KEEP.match(line) and current:
                pieces.append(" ".join(current))
                current = []
            current.append(line.strip())
        if current:
            pieces.append(" ".join(current))
    result: list[str] = []
    for piece in pieces:
        for sentence in _SENTENCE_END.split(_SPACE.sub(" ", piece)):
            sentence = sentence.strip().lstrip("-*\u2022 ").strip()
            if (
                len(sentence.split()) >= MIN_WORDS
                and not sentence.startswith(("|", "```", "#"))
                and not sentence.rstrip("\"\u201d')").endswith("?")
            ):
                result.append(sentence)
    return result


def draft_body(answer: str) -> str:
    """The draft without its leading yes or no ("Yes, qsolve supports ..." -> "qsolve supports ...")."""
    return _LEADING.sub("", answer, count=1).strip()


def candidate_sentences(
    question: str,
    passages: Sequence[Mapping[str, Any]],
    embed: Callable[[Sequence[str]], np.ndarray],
    k: int,
    draft: str | None = None,
) -> list[tuple[int, str, float]]:
    """The ``k`` sentences of ``passages`` closest to ``question`` (passage index, sentence, cosine); with
    ``draft`` (its yes or no left out, at least ``MIN_WORDS`` words) ranked by the sum of the cosines with
    the question and with the draft, the sentence the draft rests on; the cosine kept is the question's."""
    found = [(i, s) for i, p in enumerate(passages) for s in passage_sentences(str(p.get("text", "")))]
    if not found or k <= 0:
        return []
    body = draft_body(draft) if draft else ""
    texts = [question, *([body] if len(body.split()) >= MIN_WORDS else []), *(s for _, s in found)]
    vectors = np.asarray(embed(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    sentences = vectors[len(texts) - len(found) :]
    cosines = sentences @ vectors[0]
    rank = cosines + (sentences @ vectors[1] if len(texts) > len(found) + 1 else 0.0)
    order = np.argsort(-rank, kind="stable")[:k]
    return [(found[j][0], found[j][1], round(float(cosines[j]), 4)) for j in order]


def verdict_messages(sentence: str, question: str) -> list[BaseMessage]:
    return [
        SystemMessage(content=SYSTEM),
        HumanMessage(content=INSTRUCTION.format(sentence=sentence[:SENTENCE_CHARS], question=question)),
    ]


def quoted(
    candidates: Sequence[tuple[int, str, float]], passages: Sequence[Mapping[str, Any]]
) -> tuple[int, str] | None:
    """The quote: the best sentence, with the second when it is from the same passage and nearly as close
    (``SECOND_WITHIN``), in the passage's order. (passage index, text); None without candidates."""
    if not candidates:
        return None
    passage, best, cosine = candidates[0]
    chosen = [best]
    if len(candidates) > 1:
        other_passage, other, other_cosine = candidates[1]
        if other_passage == passage and cosine - other_cosine <= SECOND_WITHIN:
            text = str(passages[passage].get("text", ""))
            chosen = sorted([best, other], key=lambda s: _position(text, s))
    return passage, " ".join(s.rstrip() for s in chosen)


def _position(text: str, sentence: str) -> int:
    found = re.sub(r"\s+", " ", text).find(sentence[:40])
    return found if found >= 0 else len(text)


def polarity(answer: str) -> str | None:
    """ "yes" or "no" when the answer opens with it."""
    match = _LEADING.match(answer)
    return match.group(1).lower() if match else None


def settle(
    answer: str,
    question: str,
    passages: Sequence[Mapping[str, Any]],
    model: BaseChatModel,
    embed: Callable[[Sequence[str]], np.ndarray],
    *,
    min_confidence: float,
    retries: int = 1,
    quote_from: str = "question",
) -> tuple[str, dict[str, Any]]:
    """The answer to a yes/no question with the sentence that decides it quoted after it, and the record.

    The model reads the quote alone; its verdict (at least ``min_confidence`` sure, else none) and whether
    it agrees with the draft's own yes or no are recorded. The draft itself stays as it was written."""
    if quote_from not in QUOTE_FROM:
        raise ValueError(f"yes_no_quote_from: {quote_from!r}; one of {', '.join(QUOTE_FROM)}")
    draft = answer if quote_from == "question+draft" else None
    candidates = candidate_sentences(question, passages, embed, 2, draft=draft)
    quote = quoted(candidates, passages)
    record: dict[str, Any] = {"candidates": [list(c) for c in candidates], "answer_before": answer,
                              "quote_from": quote_from}  # fmt: skip
    if quote is None:
        return answer, {**record, "outcome": "no sentence"}
    passage, text = quote
    text = text[:SENTENCE_CHARS]
    _, probabilities, raws = score_choice(
        model, verdict_messages(text, question), list(VERDICTS), retries=retries
    )
    record.update({"passage": passage, "quote": text, "raw": raws[-1] if raws else "",
                   "p": {c: round(v, 4) for c, v in probabilities.items()} if probabilities else None})  # fmt: skip
    verdict = None
    if probabilities:
        best = max(VERDICTS, key=lambda c: probabilities[c])
        if best != "unclear" and probabilities[best] >= min_confidence:
            verdict = best
    said = polarity(answer)
    quote_text = QUOTE.format(sentence=text)
    # the draft is never turned over nor replaced: the quote is added after it, and what the model read in
    # the quote is a signal (``record["agrees"]``) for the verdict, not an edit
    agrees = None if verdict is None or said is None else verdict == said
    outcome = "quote added" if verdict is None or agrees is not False else "quote disagrees"
    return f"{answer.rstrip()} {quote_text}", {**record, "verdict": verdict, "said": said, "agrees": agrees,
                                               "outcome": outcome}  # fmt: skip


def applies(question: str, answer: str) -> bool:
    """A yes/no question that got an answer (not a decline)."""
    return bool(answer) and is_yes_no_question(question) and not declines(answer)
