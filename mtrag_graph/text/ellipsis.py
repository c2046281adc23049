"""Elliptic follow-ups: "And daily ones?", "How about lz4?", "And O:?" asked again as the question before.

Such a turn names only what changes; the rest of its question is the user's previous one. The rewrite
models handle them badly: on the real-documents sets the 0.5B model gave "And daily ones?" back as the
question before it ("How many monthly archives does prune keep?"), "And O:?" as "What does the W: flag
in its output mean?", and took "How about lz4?" to the first question of its conversation (the ratio,
where the turn before asked how fast it decompresses). Retrieval then searches for the previous
question's thing, and the answer gives it (benchmarks/results/documents.md, "What the default does and
why").

Here the previous question is taken as the user asked it (itself resolved when it was a fragment too),
and the fragment's thing is put in place of the words it stands for:

- a name (one token with a digit, a capital or a mark: "lz4", "O:", "CMake") replaces the subject
  pronoun of the previous question ("how fast does it decompress?" -> "how fast does lz4 decompress?");
- otherwise the span of one to three words of the previous question most like the fragment's thing
  (cosine of their embeddings; "daily" -> "monthly") when it reaches ``MIN_SIMILARITY``.

A "thing" that holds a pronoun ("What about debugging them in VSCode?") is no thing of its own: it
would be put in place of a verb ("When I debugging them in VSCode a stand-alone ..."), so the turn goes
to the rewrite model.

Nothing else is guessed: after a previous turn that is no question ("Deductions"), or with no sure
place ("And cmake?" beside "Meson"), the turn is left to the rewrite model, as every other turn is.

A thing that is a prepositional phrase ("And over Q?") replaces the phrase of the same preposition in
the latest question that has one ("... over the integers with 4ti2?"), which may be two turns back: the
turn between ("Which files does that call create?") asked about the first one's result.

A turn that is only a condition ("And if the same loop is inside a function?", "What if I had declared
--sauce first?") replaces the one "if" clause of the previous question ("What happens if I declare a
static variable inside a for loop ...?" -> "What happens if the same loop is inside a function?"): the
rewrite models dropped the "And" and asked the bare condition, which asks nothing. A previous question
with no "if" clause, or with two, or whose "if" means "whether" ("Can you tell me if ..."), leaves the
turn to the rewrite model.

A turn that is only a purpose ("And to make an arrowhead point the other way?") after a how-to question
("How do I change the size of all arrowheads ...?") asks that question's way for its own purpose: "How
do I make an arrowhead point the other way?". The 0.5B model gave it back unchanged, and the answer then
repeated the previous one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from mtrag_graph.text import STOPWORDS

# the opener of a fragment, then what it names (at most MAX_FRAGMENT_WORDS words)
_FRAGMENT = re.compile(
    r"^\s*(?:and\s+(?:what|how)\s+about|what\s+about|how\s+about|and\s+for|and)\s+(?P<thing>.+?)[\s?!.]*$",
    re.IGNORECASE,
)
MAX_FRAGMENT_WORDS = 4
# longer turns are no fragment, condition or purpose, and are not matched at all (a turn of thousands of
# spaces would cost the patterns' backtracking seconds)
MAX_FRAGMENT_CHARS = 400
# a "thing" that opens with these is a question of its own ("And how fast does it decompress?")
_ASKS_ITSELF = frozenset(
    "how what which why when where who whom whose is are was were am do does did can could should would "
    "will may might must shall if i you we they he she it there".split()
)
# a pronoun inside the thing: it names no thing of its own ("What about debugging them in VSCode?")
_REFERS_BACK = re.compile(r"\b(?:it|its|them|they|their|he|him|his|she|her)\b", re.IGNORECASE)
_DETERMINER = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_PRO_FORM = re.compile(r"\s+ones?$", re.IGNORECASE)  # "daily ones" stands for "daily"
_CONJUNCTION = re.compile(r"^\s*(?:and|so|but|also|then)\s+", re.IGNORECASE)
# the pronoun a name takes the place of: the subject of the previous question's verb
_SUBJECT_PRONOUN = re.compile(r"\b(?:does|do|did|can|could|will|would|should)\s+(?P<pronoun>it|they)\b", re.I)
_NAME = re.compile(r"^(?=\S*[0-9A-Z:_./+#-])\S+$")
_TOKEN = re.compile(r"[^\s?!,;]+")
_EDGE_MARKS = "\"'()[]."
MIN_SIMILARITY = 0.5  # the embedder's cosine between the thing and the words it replaces
MAX_SPAN_WORDS = 3
MAX_DEPTH = 3  # fragments after fragments: how far back a base question is looked for

_PREPOSITIONS = (
    "over|in|on|under|with|without|for|from|to|at|by|into|inside|via|through|during|before|after|behind"
)
# a thing that is a prepositional phrase naming something ("over Q", "on Windows", "in version 2"), not
# a pronoun ("in it")
_PREPOSITION_THING = re.compile(
    rf"^(?P<preposition>{_PREPOSITIONS})\s+(?!(?:it|them|this|that|these|those|there)\b)\S", re.IGNORECASE
)

# a turn that is only a condition: an opener, "if", a clause that asks nothing of its own
_CONDITION = re.compile(
    r"^\s*(?:(?:and|but|so|or)\s+)?(?:what\s+(?:about\s+)?)?if\s+(?P<clause>[^?!]+?)[\s?!.]*$", re.IGNORECASE
)
_ASKS_IN_CLAUSE = re.compile(
    r"\b(?:what|how|why|which|who|whom|whose|where|when|whether)\b|[,;:]"
    r"|\b(?:can|could|do|does|did|should|will|would|is|are|may|must)\s+(?:i|you|we|they|it|he|she)\b",
    re.IGNORECASE,
)
MAX_CONDITION_WORDS = 20
# a turn that is only a purpose: a conjunction, "to", a verb phrase that asks nothing of its own
_PURPOSE = re.compile(r"^\s*(?:and|but|so|or)\s+to\s+(?P<verb_phrase>[^?!]+?)[\s?!.]*$", re.IGNORECASE)
# a how-to question: its way ("How do I", "How can we") and the verb phrase after it
_HOW_TO = re.compile(
    r"^(?P<way>how\s+(?:do|can|could|should|would|will)\s+(?:i|we|you|one))\s+\S", re.IGNORECASE
)
# the previous question's "if" clause: to the next comma or the question's end
_IF_CLAUSE = re.compile(r"\bif\s+[^,?!;]+", re.IGNORECASE)
# "if" after these means "whether" ("Can you tell me if it supports Python?"): no condition to replace
_WHETHER_VERBS = frozenset(
    "know tell me ask asking asked see check wonder wondering sure unsure determine find".split()
)

Similarity = Callable[[str, Sequence[str]], Sequence[float]]


@dataclass(frozen=True)
class Resolution:
    """An elliptic turn asked again as a whole question, and how."""

    question: str
    base: str  # the previous question it was made from
    replaced: str  # the words of ``base`` the fragment's thing took the place of
    by: str
    how: str  # "pronoun" | "similarity" | "phrase" | "condition" | "purpose"
    similarity: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def fragment_thing(question: str) -> str | None:
    """What an elliptic turn names ("And daily ones?" -> "daily ones"), or None for any other turn."""
    if len(question) > MAX_FRAGMENT_CHARS:
        return None
    match = _FRAGMENT.match(question)
    if not match:
        return None
    thing = match.group("thing").strip()
    tokens = thing.split()
    if not tokens or len(tokens) > MAX_FRAGMENT_WORDS or tokens[0].lower() in _ASKS_ITSELF:
        return None
    if _REFERS_BACK.search(thing):
        return None  # "debugging them in VSCode": no thing of its own to put in place, but an activity on one
    return thing


def _asks_nothing(pattern: re.Pattern[str], question: str) -> str | None:
    """The words ``pattern``'s one group takes from a short ``question``, when they ask nothing of their own
    (no question word, comma or inverted auxiliary) and run to 2 to ``MAX_CONDITION_WORDS`` words."""
    match = pattern.match(question) if len(question) <= MAX_FRAGMENT_CHARS else None
    if not match:
        return None
    taken = match.group(1).strip()
    if _ASKS_IN_CLAUSE.search(taken) or not 2 <= len(taken.split()) <= MAX_CONDITION_WORDS:
        return None
    return taken


def condition_clause(question: str) -> str | None:
    """What a turn that is only a condition states ("And if the same loop is inside a function?" -> "the
    same loop is inside a function"), or None for any other turn ("If I divorce, do I have to share my
    401K?" asks a question of its own)."""
    return _asks_nothing(_CONDITION, question)


def purpose_phrase(question: str) -> str | None:
    """What a turn that is only a purpose wants done ("And to make an arrowhead point the other way?" ->
    "make an arrowhead point the other way"), or None for any other turn."""
    return _asks_nothing(_PURPOSE, question)


def is_fragment(question: str) -> bool:
    """Is ``question`` an elliptic turn ``resolve_fragment`` may ask again as the previous question?"""
    return any(f(question) is not None for f in (fragment_thing, condition_clause, purpose_phrase))


def _for_purpose(phrase: str, earlier: list[str]) -> Resolution | None:
    """The previous how-to question's way with ``phrase`` as what is to be done."""
    if not earlier:
        return None
    base = _CONJUNCTION.sub("", earlier[-1]).strip()
    match = _HOW_TO.match(base)
    if match is None or not base.endswith("?"):
        return None
    way = match.group("way")
    old = base[match.end("way") :].strip().rstrip("?").strip()
    if old.lower() == phrase.lower():
        return None
    return Resolution(f"{way[:1].upper()}{way[1:]} {phrase}?", base, old, phrase, "purpose")


def _under_condition(clause: str, earlier: list[str], depth: int = MAX_DEPTH) -> Resolution | None:
    """The previous question with its one "if" clause in ``clause``'s place."""
    if not earlier or depth == 0:
        return None
    previous = earlier[-1]
    if (previous_clause := condition_clause(previous)) is not None:
        resolved = _under_condition(previous_clause, earlier[:-1], depth - 1)
        if resolved is None:
            return None
        base = resolved.question
    else:
        base = _CONJUNCTION.sub("", previous).strip()
    if fragment_thing(base) is not None or not base.endswith("?"):
        return None
    found = list(_IF_CLAUSE.finditer(base))
    if len(found) != 1:
        return None
    start, end = found[0].span()
    before = base[:start].split()
    if before and before[-1].lower().strip(",") in _WHETHER_VERBS:
        return None
    old = base[start:end].rstrip()
    new = f"{base[start : start + 2]} {clause}"  # "If"/"if" as the previous question had it
    if old.lower() == new.lower():
        return None
    return Resolution(_put(base, start, start + len(old), new), base, old, new, "condition")


def resolve_fragment(
    question: str, earlier_questions: Sequence[str], similarity: Similarity
) -> Resolution | None:
    """``question`` asked again as the last of ``earlier_questions`` (the user's turns before it, oldest
    first) with the fragment's thing in place; None when it is no fragment or no place is sure. A thing
    that opens with a preposition ("over Q") takes the place of the same preposition's phrase in the
    latest question that has one."""
    clause = condition_clause(question)
    if clause is not None:
        return _under_condition(clause, list(earlier_questions))
    phrase = purpose_phrase(question)
    if phrase is not None:
        return _for_purpose(phrase, list(earlier_questions))
    thing = fragment_thing(question)
    if thing is not None and (resolved := _in_place_of_phrase(thing, list(earlier_questions))):
        return resolved
    return _resolve(question, list(earlier_questions), similarity, MAX_DEPTH)


def _in_place_of_phrase(thing: str, earlier: list[str]) -> Resolution | None:
    """ "And over Q?" after "How do I solve a linear system over the integers with 4ti2?" (two turns
    back) -> "How do I solve a linear system over Q with 4ti2?": the latest of the last ``MAX_DEPTH``
    questions with a phrase of the thing's preposition (to the next preposition or the end), and one
    such phrase only."""
    match = _PREPOSITION_THING.match(thing)
    if match is None:
        return None
    phrase = re.compile(
        rf"\b{match.group('preposition')}\s+(?!(?:{_PREPOSITIONS})\b)[^?!.,;]+?(?=\s+(?:{_PREPOSITIONS})\b|\s*[?!.,;]|$)",
        re.IGNORECASE,
    )
    for base in reversed(earlier[-MAX_DEPTH:]):
        base = _CONJUNCTION.sub("", base).strip()
        if fragment_thing(base) is not None or not base.endswith("?"):
            continue
        found = list(phrase.finditer(base))
        if len(found) > 1:
            return None
        if found:
            start, end = found[0].span()
            if len(base[start:end].split()) > MAX_SPAN_WORDS + 1 or base[start:end].lower() == thing.lower():
                return None
            return Resolution(_put(base, start, end, thing), base, base[start:end], thing, "phrase")
    return None


def _resolve(question: str, earlier: list[str], similarity: Similarity, depth: int) -> Resolution | None:
    thing = fragment_thing(question)
    if thing is None or not earlier or depth == 0:
        return None
    previous = earlier[-1]
    if fragment_thing(previous) is not None:
        resolved = _resolve(previous, earlier[:-1], similarity, depth - 1)
        if resolved is None:
            return None
        base = resolved.question
    else:
        base = _CONJUNCTION.sub("", previous).strip()
    if not base.endswith("?"):
        return None  # a topic named on its own ("Deductions"): no question to ask again
    core = _DETERMINER.sub("", _PRO_FORM.sub("", thing)).strip()
    return _in_place_of_pronoun(base, core) or _in_place_of_likest(base, core, similarity)


def _in_place_of_pronoun(base: str, core: str) -> Resolution | None:
    if not _NAME.match(core):
        return None
    found = list(_SUBJECT_PRONOUN.finditer(base))
    if len(found) != 1:
        return None
    start, end = found[0].span("pronoun")
    return Resolution(_put(base, start, end, core), base, base[start:end], core, "pronoun")


def _spans(base: str) -> list[tuple[int, int]]:
    """(start, end) of every run of one to MAX_SPAN_WORDS words of ``base`` that neither opens nor ends
    with a function word ("monthly", "W:", "matrix A")."""
    tokens: list[tuple[int, int, bool]] = []  # start, end, a function word
    for match in _TOKEN.finditer(base):
        text = match.group()
        lead = len(text) - len(text.lstrip(_EDGE_MARKS))
        trail = len(text.rstrip(_EDGE_MARKS))
        if trail > lead:
            word = text[lead:trail]
            # a capital letter past the first word is a name ("the matrix A"), not the article
            function = word.lower() in STOPWORDS and not (tokens and word.isupper() and word != "I")
            tokens.append((match.start() + lead, match.start() + trail, function))
    spans = []
    for i, (start, _, function) in enumerate(tokens):
        if function:
            continue
        for j in range(i, min(i + MAX_SPAN_WORDS, len(tokens))):
            if not tokens[j][2]:
                spans.append((start, tokens[j][1]))
    return spans


def _in_place_of_likest(base: str, core: str, similarity: Similarity) -> Resolution | None:
    spans = _spans(base)
    if not spans or not core:
        return None
    scores = [float(s) for s in similarity(core, [base[a:b] for a, b in spans])]
    best = max(range(len(spans)), key=lambda k: (scores[k], -k))
    if scores[best] < MIN_SIMILARITY:
        return None
    start, end = spans[best]
    if base[start:end].lower() == core.lower():
        return None  # the thing is already the previous question's: nothing changes
    replaced = base[start:end]
    return Resolution(
        _put(base, start, end, core), base, replaced, core, "similarity", round(scores[best], 4)
    )


def _put(base: str, start: int, end: int, core: str) -> str:
    text = base[:start] + core + base[end:]
    text = text[:1].upper() + text[1:]
    return text if text.rstrip().endswith("?") else text.rstrip(" .") + "?"
