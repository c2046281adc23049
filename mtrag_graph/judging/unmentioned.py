"""Names the question asks about that no kept passage mentions: the passages cannot answer for them.

"Does 4ti2 offer bindings for Python?" over passages of the 4ti2 manual that never say "Python": the
answer model wrote a quote about libraries, a "yes" in all but name. A question that names a thing (a
capitalised word inside the sentence, a token with a digit, a hyphen or an underscore, an option) that
none of the passages the turn would be answered from says, in any case, is declined before the answer
is written (``nodes/answerability_gate.py``).

Over a user's documents only: on the real-documents tuning split it fired on 2 of 8
unanswerable questions and on none of 51 answerable ones; on MTRAG's reference tasks it fires on 7.8% of
ANSWERABLE turns with their own gold passages (55 of 709: "When was the Byzantine Empire founded?" over
passages that say "Byzantine" nowhere but answer it), so there the passages' wording is too loose a
test (benchmarks/results/documents.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mtrag_graph.passages import document_source

# a capitalised word that does not open the sentence; a token with a digit after letters ("lz4",
# "S3"); one with a hyphen or underscore inside ("additional_free_space", "keep-within"); an option
_NAME = re.compile(
    r"(?<!^)(?<![.?!] )\b([A-Z][A-Za-z0-9+#.-]*[A-Za-z0-9+#]|[a-z]+[0-9][a-z0-9]*|[a-z0-9]+[-_][a-z0-9_-]+)\b"
    r"|(?<!\w)(--?[a-z][a-z-]+)\b"
)


def question_names(question: str) -> list[str]:
    """The names of the question (``_NAME``), in order, each once; not a word of one or two letters
    ("OK", "US", "IT": in capitals they are as often a common word; "S3" stays)."""
    text = question.strip()
    found = [m.group(1) or m.group(2) for m in _NAME.finditer(text)]
    return list(dict.fromkeys(name for name in found if not (name.isalpha() and len(name) <= 2)))


def _said(name: str, text: str) -> bool:
    """Does ``text`` (lower case) say the name: as written, without a plural "s", or, for a word
    compound with a hyphen, with its parts apart or run together ("explicit-width" is said by "an
    explicit width": on the Asymptote FAQ the user's hyphen declined an answerable question)? An
    option ("--keep-within") or an identifier with an underscore must be written as it is."""
    lowered = name.lower()
    if lowered in text or (len(lowered) > 3 and lowered.endswith("s") and lowered[:-1] in text):
        return True
    if name.startswith("-") or "_" in name:
        return False
    parts = [part for part in lowered.split("-") if part]
    return len(parts) > 1 and (" ".join(parts) in text or "".join(parts) in text)


def unmentioned_names(question: str, passages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The question's names that no passage's title or text says (any case; "APIs" is said by "API")."""
    text = " ".join(f"{p.get('title') or ''} {p.get('text', '')}" for p in passages).lower()
    return [name for name in question_names(question) if not _said(name, text)]


def from_documents(passages: Sequence[Mapping[str, Any]]) -> bool:
    """Every passage was cut from a user's document (``mtrag-graph index``), not a benchmark corpus."""
    return bool(passages) and all(document_source(str(p.get("document_id") or "")) for p in passages)
