"""Text units the judges work on: sentences (claims), content-word stems, bigrams."""

from __future__ import annotations

import re
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an the of to in on for and or but is are was were be been being it its this that these those with "
    "as at by from you your i me my we our us they them their he him his she her can could would should "
    "will shall may might must do does did done not no yes so if then than there here what which who whom "
    "whose when where why how about into over under also just only very more most such some any all each "
    "other both either neither own same too s t has have had having am up out off again further once".split()
)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer, the Snowball stemmer the BM25 index already uses

    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lower-case alphanumeric tokens."""
    return _WORD.findall(text.lower())


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry content (stopwords dropped)."""
    kept = [w for w in words(text) if w not in STOPWORDS]
    return _stemmer().stemWords(kept) if kept else []


def bigrams(text: str) -> list[tuple[str, str]]:
    tokens = words(text)
    return list(zip(tokens, tokens[1:], strict=False))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence and list item of ``text``, without its bullet or surrounding space."""
    spans = []
    start = 0
    for boundary in [*_SENTENCE_END.finditer(text), None]:
        end = boundary.start() if boundary else len(text)
        part = text[start:end]
        lead = len(part) - len(part.lstrip())
        bullet = _BULLET.match(part[lead:])
        lead += bullet.end() if bullet else 0
        body = part[lead:].strip()
        if body:
            first = start + lead + (len(part[lead:]) - len(part[lead:].lstrip()))
            spans.append((first, first + len(body)))
        if boundary:
            start = boundary.end()
    return spans


def sentences(text: str) -> list[str]:
    """Sentences and list items of a text that hold at least one content word (the claims it makes)."""
    parts = (text[s:e] for s, e in sentence_spans(text))
    return [p for p in parts if content_stems(p)]
