"""The evidence the answer is written from: the sentences of the kept passages that bear on the question.

On a CPU the prompt is the cost of an answer (about 100 prompt tokens/s for the 1.5B model on 2 cores):
five whole passages of up to 512 tokens each cost half a minute before the first word. The answering
prompts therefore see, of each kept passage, only its sentences that bear on the question, within a
token budget shared by all passages, best first:

- each sentence is scored against the question: the cosine of their embeddings (the embedder the
  reranker already loaded) plus the share of the question's content stems it holds, weighted by how
  rare each stem is among the kept sentences; sentences of better-ranked passages get a small lead;
- sentences are taken best first while the budget lasts, each with the neighbours it needs to be read
  right: the sentence before one that opens with a reference ("It", "This", "They", ...), the lines
  after a lead-in, heading or list item title (a line that ends with a colon or with no full stop: a
  command or a list follows), the lead-in of such a line, and a table row's header rows; the passage's
  title and section head it in the prompt (``prompts.build.format_passages``); three options, off by
  default (``Options``): the sentence after a question (its answer), a sentence another kept passage
  already shows (overlapping windows of one page) neither shown nor paid for again, and a sentence ranked
  with a share of its better neighbour's score;
- each passage's chosen sentences are shown in their order with the text between them as the passage
  has it (a line break stays a line break, a list item keeps its bullet, so a table keeps one row a line
  and a command its own line), runs of spaces squeezed, a gap marked "...".

Passages keep their numbers and their full text everywhere else (the gate's features, the grounding
check, citations): only what the model reads is cut.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mtrag_graph.text import content_stems, sentence_spans

# the default budget (Context.evidence_tokens), in estimate_tokens: research/evidence_keyfacts.py on the
# real-documents tuning split (research/data/evidence_keyfacts.json)
EVIDENCE_TOKENS = 300
# tokens of a text for the budget (estimate_tokens): about 4.2 letters a token, but a digit is a token of
# its own with Qwen's tokenizer and punctuation costs more than a letter; fitted on the real-documents
# tuning passages (155 passages: estimate / Qwen2.5 count, median 1.05, 80% within 0.86-1.25, where
# characters / 4 ranged from 0.25 on a table of numbers to 1.8)
LETTERS_PER_TOKEN = 4.2
PUNCTUATION_TOKENS = 0.6
RANK_LEAD = 0.05  # a sentence of the passage ranked r gets RANK_LEAD / (r + 1) more
LEXICAL_WEIGHT = 0.5
_REFERRING_OPENERS = frozenset(
    "it its it's this that these those they them their he she his her such there then here both "
    "the latter former however also otherwise instead".split()
)
_TITLE_WORDS = 8
_MAX_FOLLOWING_LINES = 4  # after a sentence ending with ':' (a list, a command), at most this many lines

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Options:
    """How the excerpts are chosen beyond the default (``Context.evidence_after_questions``,
    ``Context.evidence_shown_once``, ``Context.evidence_neighbour_weight``): the first two helped the
    real-documents tuning and fresh splits and not MTRAG dev (benchmarks/results/documents.md, the ninth
    round); the third kept more key facts there, fewer of MTRAG's reference answers' words, and was level
    live (the thirteenth round)."""

    after_questions: bool = False  # a question in a passage brings the sentence after it (an FAQ's answer)
    shown_once: bool = False  # a sentence another kept passage already shows is not shown or paid for again
    # a sentence is ranked as if it scored this share of its better neighbour's score more (the fact
    # often sits beside the sentence that names what is asked); 0: off
    neighbour_weight: float = 0.0


DEFAULT_OPTIONS = Options()


@dataclass(frozen=True)
class Sentence:
    passage: int  # index into the kept passages
    position: int  # index among that passage's sentences
    text: str
    score: float = 0.0
    start: int = -1  # where the sentence starts and ends in its passage's text (-1: not known)
    end: int = -1


def evidence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (``text.sentence_spans``), with a sentence that a line
    break wraps made whole again: a PDF's lines end where the page's width ends, so "There is no
    particular difference in 4ti2 between a linear system and an integer" and "linear system." are one
    sentence. A line continues the one before it when that one ends without a full stop, colon or
    semicolon, only a line break lies between them (no blank line, no bullet) and it begins in lower case."""
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        if spans:
            last_start, last_end = spans[-1]
            between, previous = text[last_end:start], text[last_start:last_end]
            if (
                _WRAP.fullmatch(between)
                and _continues(previous, text[start:end])
                and end - last_start <= _MAX_WRAPPED_CHARS
            ):
                spans[-1] = (last_start, end)
                continue
        spans.append((start, end))
    return spans


_WRAP = re.compile(r"[ \t]*\n[ \t]*")
_MAX_WRAPPED_CHARS = 400  # a wrapped sentence is rarely longer; a column of lower-case lines (code) stops
_OPENERS = ('"', "`", "'", "\u201c", "\u2018", "(")
_OPEN_END = re.compile(r"(?:^|\s)[a-z][\w'-]*$")  # ends with a lower-case word (not a title, not code)


def _continues(previous: str, line: str) -> bool:
    """Whether ``line`` goes on with the sentence ``previous`` leaves open: it begins in lower case after a
    line that ends without a full stop, colon or semicolon; or it begins with a quote, code span or
    bracket after a line that ends in the middle of a sentence (a lower-case word, not a title's nor code: 'which
    stood for' / '"C's Answer to MetaPost"', 'so' / '`\\"` is interpreted as ...')."""
    if previous.endswith((".", "!", "?", ":", ";")):
        return False
    if line[:1].islower():
        return True
    return line.startswith(_OPENERS) and bool(_OPEN_END.search(previous))


def _opens_with_reference(sentence: str) -> bool:
    first = sentence.split(maxsplit=1)[0].lower().strip("\"'(,") if sentence.split() else ""
    return first in _REFERRING_OPENERS


def lexical_scores(question: str, sentences: Sequence[str]) -> list[float]:
    """Share of the question's content stems each sentence holds, each stem weighted by its rarity."""
    asked = set(content_stems(question))
    if not asked:
        return [0.0] * len(sentences)
    stems = [set(content_stems(s)) for s in sentences]
    df = Counter(stem for bag in stems for stem in bag if stem in asked)
    n = len(sentences)
    weight = {stem: math.log(1 + n / (1 + df[stem])) for stem in asked}
    total = sum(weight.values()) or 1.0
    return [sum(weight[stem] for stem in bag & asked) / total for bag in stems]


def score_sentences(
    question: str, passages: Sequence[Mapping[str, Any]], embed: Embed | None = None
) -> list[list[Sentence]]:
    """Every sentence of every passage, scored for ``question`` (a list per passage, in text order)."""
    bodies = [str(p.get("text") or "") for p in passages]
    flat = [(i, j, span) for i, body in enumerate(bodies) for j, span in enumerate(evidence_spans(body))]
    if not flat:
        return [[] for _ in passages]
    texts = [bodies[i][start:end] for i, _, (start, end) in flat]
    lexical = lexical_scores(question, texts)
    if embed is not None:
        vectors = embed([question, *texts])
        semantic = [float(v) for v in vectors[1:] @ vectors[0]]
    else:
        semantic = [0.0] * len(texts)
    scored: list[list[Sentence]] = [[] for _ in passages]
    for (i, j, (start, end)), text, lex, sem in zip(flat, texts, lexical, semantic, strict=True):
        score = sem + LEXICAL_WEIGHT * lex + RANK_LEAD / (i + 1)
        scored[i].append(Sentence(i, j, text, score, start, end))
    return scored


def _is_title(line: str) -> bool:
    """A heading or a list item's title ("Create the dictionary"): short, capitalised, no full stop."""
    return line[:1].isupper() and len(line.split()) <= _TITLE_WORDS and not line.endswith((".", "!", "?"))


def _with_neighbours(
    sentences: Sequence[Sentence], position: int, after_questions: bool = False
) -> list[int]:
    """The positions a chosen sentence needs beside it to be read right."""
    wanted = [position]
    if position > 0 and _opens_with_reference(sentences[position].text):
        wanted.insert(0, position - 1)
    # a line of a list or a command: the lead-in that ends with a colon, a few lines up at most
    for k in range(position - 1, max(position - 1 - _MAX_FOLLOWING_LINES, -1), -1):
        line = sentences[k].text.rstrip()
        if line.endswith(":"):
            wanted[:0] = [j for j in range(k, position) if j not in wanted]
            break
        if line.endswith((".", "!", "?")):
            break
    own = sentences[position].text.strip()
    if own.startswith("|"):
        # a table row: the table's header (its first rows) says what each column holds
        first = position
        while first > 0 and sentences[first - 1].text.strip().startswith("|"):
            first -= 1
        wanted[:0] = [j for j in range(first, min(first + 2, position)) if j not in wanted]
    elif own.endswith(":") or _is_title(own) or (after_questions and own.endswith("?")):
        # a lead-in ("To turn it on, run:"), a heading or a list item's title ("1. Create the dictionary"),
        # with ``after_questions`` a question (an FAQ's, a manual's "Why ...?"): what it introduces or its
        # answer follows, up to the end of a sentence
        for k in range(position + 1, min(position + 1 + _MAX_FOLLOWING_LINES, len(sentences))):
            wanted.append(k)
            if sentences[k].text.rstrip().endswith((".", "!", "?")):
                break
    return wanted


def estimate_tokens(text: str) -> float:
    """About how many tokens ``text`` costs the answering model (no tokenizer needed): letters at
    ``LETTERS_PER_TOKEN``, a digit one token, a punctuation mark ``PUNCTUATION_TOKENS``."""
    digits = sum(c.isdigit() for c in text)
    marks = sum(not c.isalnum() and not c.isspace() for c in text)
    return (len(text) - digits - marks) / LETTERS_PER_TOKEN + digits + marks * PUNCTUATION_TOKENS


def lift_neighbours(scored: Sequence[Sequence[Sentence]], weight: float) -> list[list[Sentence]]:
    """Each sentence's score plus ``weight`` times the better score of the sentences just before and after
    it in its passage (``Options.neighbour_weight``)."""
    lifted = []
    for sents in scored:
        row = []
        for k, sentence in enumerate(sents):
            beside = [sents[j].score for j in (k - 1, k + 1) if 0 <= j < len(sents)]
            row.append(replace(sentence, score=sentence.score + weight * max(beside, default=0.0)))
        lifted.append(row)
    return lifted


def choose_evidence(
    scored: Sequence[Sequence[Sentence]], budget_tokens: float, options: Options = DEFAULT_OPTIONS
) -> list[list[int]]:
    """Best sentences first, with their neighbours, while ``budget_tokens`` (``estimate_tokens``) lasts:
    the chosen positions of each passage, in text order. The best sentence is always taken, whatever its
    length. With ``options.shown_once`` a sentence already shown (the same words in another kept passage:
    overlapping windows of one page, a page copied across a site) is not shown again, nor paid for twice."""
    if options.neighbour_weight:
        scored = lift_neighbours(scored, options.neighbour_weight)
    chosen: list[set[int]] = [set() for _ in scored]
    shown: set[str] = set()
    used = 0.0
    ranked = sorted((s for sents in scored for s in sents), key=lambda s: (-s.score, s.passage, s.position))
    for best in ranked:
        sents = scored[best.passage]
        wanted = [
            k for k in _with_neighbours(sents, best.position, options.after_questions)
            if k not in chosen[best.passage] and not (options.shown_once and _said(sents[k].text) in shown)
        ]  # fmt: skip
        if not wanted:
            continue
        cost = sum(estimate_tokens(sents[k].text) + 0.25 for k in wanted)
        if used and used + cost > budget_tokens:
            continue
        chosen[best.passage].update(wanted)
        if options.shown_once:
            shown.update(_said(sents[k].text) for k in wanted)
        used += cost
        if used >= budget_tokens:
            break
    return [sorted(c) for c in chosen]


def _said(sentence: str) -> str:
    """A sentence's words, for telling one shown twice (case, spacing and punctuation aside)."""
    return " ".join(re.findall(r"\w+", sentence.lower()))


def render_evidence(sentences: Sequence[Sentence], positions: Sequence[int], text: str | None = None) -> str:
    """The chosen sentences in text order; a gap between them (or before the first) shown as "...".

    With the passage's ``text`` (and sentences that know their place in it), what lies between two
    adjacent sentences is kept as the passage has it (a line break, a list item's bullet, a table's next
    row) and runs of spaces are squeezed; without it, sentences are joined by spaces."""
    if text is None or any(sentences[k].start < 0 for k in positions):
        words: list[str] = []
        last = -1
        for k in positions:
            if k != last + 1:
                words.append("...")
            words.append(sentences[k].text)
            last = k
        if words and last != len(sentences) - 1:
            words.append("...")
        return " ".join(words)
    parts: list[str] = []
    previous: Sentence | None = None
    for k in positions:
        sentence = sentences[k]
        if previous is not None and k == previous.position + 1:
            parts.append(text[previous.end : sentence.start])
        else:
            if previous is not None or k > 0:  # something is left out before this sentence
                skipped = text[previous.end if previous else 0 : sentence.start]
                parts.append(
                    ("\n...\n" if parts else "...\n") if "\n" in skipped else (" ... " if parts else "... ")
                )
            parts.append(_bullet_before(text, sentence.start))
        parts.append(sentence.text)
        previous = sentence
    if previous is not None and previous.position != len(sentences) - 1:
        parts.append("\n..." if "\n" in text[previous.end :] else " ...")
    return _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", "".join(parts))).strip()


def _bullet_before(text: str, start: int) -> str:
    """The list bullet ("- ", "2. ") that opens the line a sentence starts, if any."""
    lead = text[text.rfind("\n", 0, start) + 1 : start]
    return lead.strip() + " " if _BULLET.match(lead) else ""


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+$")
_SPACES = re.compile(r"[ \t]{2,}")  # a table's padding, an indentation
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")


def select_evidence(
    question: str,
    passages: Sequence[Mapping[str, Any]],
    budget_tokens: int,
    embed: Embed | None = None,
    options: Options = DEFAULT_OPTIONS,
) -> list[str]:
    """For each passage, the excerpt the answering prompts show ('' for a passage none of whose sentences
    fits the budget). A passage short enough for the budget on its own is still cut to what bears on the
    question when the passages together exceed it; when all of them fit, each is shown whole."""
    texts = [str(p.get("text") or "") for p in passages]
    if _fit(texts, budget_tokens):  # nothing to cut: no sentence is scored (nor embedded)
        return texts
    return excerpts(texts, score_sentences(question, passages, embed), budget_tokens, options)


def _fit(texts: Sequence[str], budget_tokens: int) -> bool:
    return sum(estimate_tokens(t) for t in texts) <= budget_tokens


def excerpts(
    texts: Sequence[str],
    scored: Sequence[Sequence[Sentence]],
    budget_tokens: int,
    options: Options = DEFAULT_OPTIONS,
) -> list[str]:
    """``select_evidence`` from sentences already scored (``score_sentences``): one scoring serves
    several budgets (``research/evidence_budget.py``)."""
    if _fit(texts, budget_tokens):
        return list(texts)
    chosen = choose_evidence(scored, budget_tokens, options)
    return [render_evidence(s, c, t) if c else "" for s, c, t in zip(scored, chosen, texts, strict=True)]
