"""Does an answer decline? A refusal detector tuned on the golden file's official IDK verdicts.

An answer declines when it opens with a refusal ("I do not have specific information ...", "Sorry, ...",
"The documents do not provide ...") and adds at most a short remark after it, or when it is only a
pleasantry ("You're welcome! ...", "feel free to ask"), which the official judge also counts as not
answering. A refusal followed by a real answer ("... However, chemotherapy can affect fertility: ...")
is an answer with a caveat (the official judge's verdict on the tuning half): ``partial``.
"""

from __future__ import annotations

import re
from typing import Literal

from mtrag_graph.judging.text import words

Verdict = Literal["declines", "partial", "answers"]

# words after the refusal beyond which the answer counts as answering (tuning half: remarks of 14-15
# words were judged declines, continuations of 24 words and more answers)
REMARK_WORDS = 20
PLEASANTRY_CHARS = 300

_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m |i am )?sorry|unfortunately|i apologi[sz]e)?[\s,:]*(?:but\s+)?"
    r"(?:i\s+(?:do not|don't|dont|cannot|can't|can not|am unable to|am not able to)\s+"
    r"(?:have|know|find|provide|answer|see)"
    r"|i\s+have\s+no\s+(?:specific\s+|further\s+)?(?:information|knowledge|details|data)"
    r"|there (?:is|are) no (?:specific\s+)?(?:information|details|mention)"
    r"|(?:the |these |those )?(?:provided |given |available )?(?:documents?|passages?|texts?|context|sources?)"
    r" (?:do|does|did) not (?:provide|contain|mention|include|say|specify|state|cover|discuss)"
    r"|no (?:specific )?information (?:is )?(?:available|provided|given))",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
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
        first, _, rest = _split_first_sentence(text)
        contrast = _CONTRAST.search(first, match.end())
        remark = (first[contrast.end() :] + " " + rest) if contrast else rest
        return "declines" if len(words(remark)) <= REMARK_WORDS else "partial"
    if len(text) <= PLEASANTRY_CHARS and _PLEASANTRY.search(text):
        return "declines"
    return "answers"


def declines(text: str) -> bool:
    return decline_verdict(text) == "declines"


def _split_first_sentence(text: str) -> tuple[str, str, str]:
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return parts[0], " ", parts[1] if len(parts) > 1 else ""
