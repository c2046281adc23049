"""Content words: what is left of a text without its function words (no topic vocabulary involved)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
# function words only: what is left of a question is what the passages must mention
FUNCTION_WORDS = frozenset(
    """a an the and or but if then than so of to in on at by for with from into onto about as is are was
    were be been being am do does did doing have has had having can could will would shall should may
    might must not no yes it its this that these those there their they them he she his her him i me my
    we us our you your what which who whom whose when where why how any some all each every more most
    other such only own same also just very too much many few one ones get got tell know like please""".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in FUNCTION_WORDS}
