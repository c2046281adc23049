"""The one text layer: words, stopwords, content stems, sentences, and whether an answer declines.

The graph (rewrite, clarify, the gate's evidence features, the candidates, the verdict, the grounding
check), the fitted judges and the evaluation harness all read text through this module, so they agree
on what a word, a content word, a sentence and a refusal are.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

import Stemmer  # PyStemmer, the Snowball stemmer the BM25 index already uses

WORD = re.compile(r"[a-z0-9]+")
# closed-class words only (determiners, pronouns, auxiliaries, prepositions, conjunctions, and the
# request words of a question: "tell", "know", "please"); no topic vocabulary
STOPWORDS = frozenset(
    """a an the and or but if then than so of to in on at by for with from into onto about as is are was
    were be been being am do does did doing done have has had having can could will would shall should may
    might must not no yes it its this that these those there here their they them he she his her him i me
    my we us our you your yours what which who whom whose when where why how any some all each every more
    most other such only own same also just very too much many few one ones both either neither up out off
    over under above below again further once after before between during through until while down get
    got tell know like please s t""".split()
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# a period after these ends no sentence ("Dr. Ochoa", "J. K. Rowling", "e.g. this")
_ABBREVIATION = re.compile(
    r"(?:\b(?:dr|mr|mrs|ms|prof|st|jr|sr|vs|no|fig|approx|e\.g|i\.e|u\.s)|\b(?-i:[A-Z]))\.$", re.IGNORECASE
)


def words(text: str) -> list[str]:
    """Lower-case alphanumeric tokens."""
    return WORD.findall(text.lower())


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The Snowball stem of one word ("libraries" and "library" -> "librari")."""
    return _stemmer().stemWord(word.lower())


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry content (stopwords dropped), in order."""
    kept = [w for w in words(text) if w not in STOPWORDS]
    return _stemmer().stemWords(kept) if kept else []


def content_words(text: str) -> set[str]:
    """The distinct words of three letters or more that carry content, unstemmed. The gate's overlap
    features use them: with stems, retrieved passages of UNANSWERABLE turns overlap the question as
    much as the right ones do (cross-validated balanced accuracy 0.655 against 0.710, tuning split)."""
    return {w for w in words(text) if len(w) > 2 and w not in STOPWORDS}


def bigrams(text: str) -> list[tuple[str, str]]:
    tokens = words(text)
    return list(zip(tokens, tokens[1:], strict=False))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence and list item of ``text``, without its bullet or surrounding space."""
    spans = []
    start = 0
    for boundary in [*_SENTENCE_END.finditer(text), None]:
        if boundary and "\n" not in boundary.group() and _ABBREVIATION.search(text[start : boundary.start()]):
            continue
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
    """The sentences and list items of a text (sentence end then space, or a line break)."""
    return [text[s:e] for s, e in sentence_spans(text)]


def claims(text: str) -> list[str]:
    """The sentences and list items that hold at least one content word (the claims a text makes)."""
    return [s for s in sentences(text) if content_stems(s)]


# ---- does an answer decline? One recogniser for the graph and the evaluation harness -------------
# Tuned on the golden file's official IDK verdicts (research/refusal_threshold.py). An answer
# declines when it opens with a refusal ("I do not have specific information ...", "Sorry, ...", "The
# documents do not provide ...") and adds at most a short remark after it, or when it is only a
# pleasantry ("You're welcome! ...", "feel free to ask"), which the official judge also counts as not
# answering. A refusal followed by a real answer ("... However, chemotherapy can affect fertility: ...")
# is an answer with a caveat (the official judge's verdict on the tuning half): ``partial``.

Verdict = Literal["declines", "partial", "answers"]

# words after the refusal beyond which the answer counts as answering (tuning half: remarks of 14-15
# words were judged declines, continuations of 24 words and more answers)
REMARK_WORDS = 20
PLEASANTRY_CHARS = 300

_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m |i am )?sorry(?: that)?|unfortunately|i apologi[sz]e)?[\s,:]*(?:but\s+)?"
    r"(?:i\s+(?:do not|don't|dont|cannot|can't|can not|am unable to|am not able to)\s+"
    r"(?:have|know|find|provide|answer|see)"
    r"|i\s+have\s+no\s+(?:specific\s+|further\s+)?(?:information|knowledge|details|data)"
    r"|(?:the |these |those )?(?:provided |given |available )?(?:documents?|passages?|texts?|context|sources?)"
    r"(?: provided| given| above| available)?"
    r" (?:do not|does not|did not|don't|doesn't|didn't) (?:seem to )?"
    r"(?:provide|contain|mention|include|say|specify|state|cover|discuss|address|describe|explain|give|hold)"
    r"|(?:the |these |those )?(?:provided |given )?(?:documents?|passages?|texts?|context|sources?)"
    r"(?: provided| given| above)? (?:make no mention|say nothing|are silent|have no information)"
    r"|i (?:could not|couldn't|cannot|can't|was unable to|am unable to) (?:find|locate|determine|tell)"
    r"|(?:it is|it's) not (?:possible|clear) (?:to (?:determine|tell|say) )?(?:from|based on|in) the "
    r"(?:provided |given )?(?:documents?|passages?|texts?|context|information)"
    r"|there (?:is|are) no (?:specific |relevant )?(?:information|details|mention|data|indication)"
    r"|no (?:specific )?information (?:is )?(?:available|provided|given)"
    # the graph's generators' phrasing (answers.says_idk before the two recognisers became one)
    r"|(?:this|that|it) is not (?:mentioned|provided|specified|stated|covered) in the (?:provided |given )?"
    r"(?:documents?|passages?|texts?|context))",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r",?\s+\b(?:but|however)\b[,]?\s+", re.IGNORECASE)
_PLEASANTRY = re.compile(
    r"\b(?:you'?re welcome|you are welcome|glad (?:i|to) (?:could )?(?:have )?help|feel free to ask"
    r"|anything else (?:i|we) can help|happy to help|hope (?:this|that|the information) helps)\b",
    re.IGNORECASE,
)


def decline_verdict(text: str) -> Verdict:
    """``declines`` (refuses, or only a pleasantry), ``partial`` (refuses part, answers the rest), ``answers``."""
    text = text.strip()
    if not text:
        return "declines"
    match = _REFUSAL.search(text)
    if match:
        spans = sentence_spans(text)
        first_end = spans[0][1] if spans else len(text)
        first, rest = text[:first_end], text[first_end:]
        contrast = _CONTRAST.search(first, match.end())
        remark = (first[contrast.end() :] + " " + rest) if contrast else rest
        return "declines" if len(words(remark)) <= REMARK_WORDS else "partial"
    if len(text) <= PLEASANTRY_CHARS and _PLEASANTRY.search(text):
        return "declines"
    return "answers"


def refuses(text: str) -> bool:
    """Does ``text`` open with a refusal ("I do not have information on ...", "The documents do not
    provide ...")? What follows it is not read: ``decline_verdict`` tells a decline from a caveat."""
    return bool(_REFUSAL.search(text.strip()))


def declines(text: str) -> bool:
    """Does the answer decline (refuse with at most a short remark, or only a pleasantry)?"""
    return decline_verdict(text) == "declines"
