"""Which passages back each sentence of an answer, and which facts nothing backs.

The support measure is the judging layer's lexical one (``support.lexical_features``): a claim (a
sentence) is supported to the share of its content-word stems found in the passages. Two things are
added for a single sentence: the text it may also draw on (the earlier turns for words and facts, the
question for facts only: restating the question is no support), and its *facts*: numbers (dates, amounts, counts, versions) and names (capitalised
words past a sentence's first word, acronyms). A fact must be found as such: "1921" is not supported
by a passage that says "1920", however many of the sentence's other words it shares. This is what a
fabricated answer from on-topic passages looks like: the topic's words are all there, the fact is not.

A sentence is supported when every fact is found and its content-word support reaches a threshold
(``Context.grounding_min_support``, chosen on the tuning split: benchmarks/results/answers.md). The
passages it cites are the fewest that cover its words and facts (greedy set cover, best first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from mtrag_graph.text import content_stems, refuses, sentence_spans, words
from mtrag_graph.text.answers import strip_citations

# a number starts after no letter or digit: "SHA256" holds none (it gave "56")
_NUMBER = re.compile(r"(?<![A-Za-z\d])\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9&'-]*[A-Za-z0-9]\b|\b[A-Z]\b")
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
# capitalised words that are not names wherever they stand
_NOT_NAMES = frozenset(
    "i i'm i've i'll i'd yes no however therefore also additionally furthermore moreover please note "
    "first second third finally overall then this that these those it its they there here the a an "
    "in on at for to of and or but if when while after before during with without by from as so".split()
)
LIST_NUMBER = re.compile(r"\s*\d+[.)]\s*")  # "2." left alone by a sentence split: a list's number, no claim
MAX_CITED = 3  # passages cited for one sentence at most
# words about the conversation, not the world: a sentence made only of them ("That's correct.", "You are
# right!", "I apologize for the confusion.") asserts nothing a passage could back (7 of the 88 sentences
# 300 MTRAG reference answers of the tuning split lost at the default threshold were such)
DIALOGUE_WORDS = (
    "true correct right certainly sure indeed absolutely exactly apologize apologies sorry confusion "
    "misunderstanding glad happy welcome thanks thank great question"
)
# what introduces a reason or a purpose: the clause after it is checked on its own
_REASON = re.compile(
    r"\b(?:because(?:\s+of)?|due\s+to|owing\s+to|as\s+a\s+result\s+of|in\s+order\s+to|so\s+that|"
    r"(?:was|were|is|are)\s+designed\s+to|the\s+reason\s+(?:is|was)|since)\b",
    re.IGNORECASE,
)
MIN_REASON_STEMS = 2  # "because of it": too short to be a claim of its own


@dataclass
class SentenceSupport:
    """One sentence of an answer: whether the passages back it, and which."""

    text: str
    start: int  # character span in the answer
    end: int
    supported: bool
    score: float  # share of the sentence's content-word stems found in the passages or the earlier turns
    passages: list[int] = field(default_factory=list)  # indices into the passages, best first
    unsupported_facts: list[str] = field(default_factory=list)  # numbers and names found nowhere
    claim: bool = True  # False: no content word (e.g. "Yes."): nothing to check, kept as it is

    def as_dict(self) -> dict:
        return asdict(self)


# a quantity: a number (or a range) with its unit ("60 seconds", "1-2 hours", "2GB", "1700 MB/s"). The
# answer's must be found, number and unit together, in a passage or in what was said: a number found only
# elsewhere (a page number, a list's "2") backs no quantity ("takes approximately 1-2 hours" over pages
# that say "1" and "2" apart). Units are a closed class; a size keeps only its letter ("2G" = "2 GB").
_TIME_UNITS = {
    "ms": "ms", "millisecond": "ms", "sec": "s", "second": "s", "min": "min", "minute": "min",
    "hr": "h", "hour": "h", "day": "day", "week": "week", "month": "month", "year": "year",
    "percent": "%", "per cent": "%", "%": "%", "byte": "byte", "bit": "bit",
}  # fmt: skip
# number words from two ("one day" is as often "a day"); "five-year" is "5 year"
_NUMBER_WORD = "|".join(sorted(set(_NUMBER_WORDS) - {"zero", "one"}, key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?<![\w.-])(\d+(?:[.,]\d+)*(?:\s*(?:-|\u2013|to)\s*\d+(?:[.,]\d+)*)?|{_NUMBER_WORD})\s*-?\s*"
    r"(milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|percent|per cent|%"
    r"|[kmgtp]i?b(?:/s|ps)?|bytes?|bits?)(?![\w/])(?!\s+(?:old|of age)\b)",  # "83 years old": an age, said many ways
    re.IGNORECASE,
)
_SIZE_LETTER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)([KMGTP])(?![\w/])")  # "2G" in a configuration
_SIZE_UNIT = re.compile(r"[kmgtp]i?b(?:/s|ps)?")
_RANGE_DASH = re.compile(r"\s*(?:-|\u2013|to)\s*")


def quantities_in(text: str) -> set[str]:
    """The text's quantities as "<number> <unit>" ("1-2 h", "2 g", "1700 m/s"): ranges with one dash,
    units by their short name, sizes by their letter (with "/s" for a rate)."""
    found = set()
    for match in _QUANTITY.finditer(text):
        number = _RANGE_DASH.sub("-", match.group(1)).replace(",", "").lower()
        number = _NUMBER_WORDS.get(number, number)
        unit = match.group(2).lower()
        if _SIZE_UNIT.fullmatch(unit):
            unit = unit[0] + ("/s" if unit.endswith(("/s", "ps")) else "")
        else:
            unit = _TIME_UNITS.get(unit, _TIME_UNITS.get(unit.rstrip("s"), unit))
        found.add(f"{number} {unit}")
    found.update(f"{m.group(1).replace(',', '')} {m.group(2).lower()}" for m in _SIZE_LETTER.finditer(text))
    return found


def _normalise_number(token: str) -> str:
    token = token.replace(",", "")
    return token.rstrip(".0") if "." in token and token.rstrip("0").endswith(".") else token


def numbers_in(text: str) -> set[str]:
    """Numbers as digit strings ("1,000" -> "1000"); number words up to twenty count as their digits."""
    found = {_normalise_number(m.group()) for m in _NUMBER.finditer(text)}
    found.update(_NUMBER_WORDS[w] for w in words(text) if w in _NUMBER_WORDS)
    return found


def names_in(sentence: str) -> set[str]:
    """Lower-cased capitalised words past the sentence's first word, and acronyms anywhere."""
    names: set[str] = set()
    for match in _CAPITALISED.finditer(sentence):
        token = match.group()
        lower = token.lower()
        if lower in _NOT_NAMES:
            continue
        first_word = not sentence[: match.start()].strip(" \t\n\"'([*-•")
        acronym = len(token) > 1 and token.isupper()
        if first_word and not acronym:
            continue
        # one letter is no name: "U.S." is no "u", an initial no fact of its own (7 of 400 MTRAG reference
        # answers lost a sentence to it)
        names.update(w for w in words(lower) if len(w) > 1)
    return names


# what a user types or copies, found verbatim or not at all: a code span, an option ("--fast", "-x"), a
# path ("/etc/borg", "~/.config"), a key or identifier ("site_dir", "zstd.compress", "CamelCase"), a
# version ("1.5.4", "v9"). A small model invents these from the topic's words ("a configuration key name
# that does not exist"); its words are all in the passages, the token is not.
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_TECHNICAL = re.compile(
    r"(?<![\w/~.-])(?:"
    r"--?[A-Za-z][\w-]*(?:=\S+)?"  # options
    r"|~?/[\w.+-]+(?:/[\w.+*-]*)*"  # paths
    r"|\.?[A-Za-z_][\w+-]*(?:[./][\w+*-]+)+"  # dotted and slashed names: file.ext, module.attr, a/b
    r"|[A-Za-z][A-Za-z0-9]*_[\w]*"  # snake_case
    r"|v?\d+(?:\.\d+){1,3}[a-z]?"  # versions
    r"|[A-Za-z]+\d[A-Za-z\d]*"  # names with a digit: lz4, sha256, ipv6
    r")"
)
_TRAILING = ".,;:!?)]}'\""
# prose that the patterns above also match: two sentences run together ("leader.The"), an abbreviation
# ("U.S", "e.g"), words joined by a slash ("credit/debit", "and/or", "D/E")
_PROSE = re.compile(r"[A-Za-z]+\.[A-Z][a-z]*|(?:[A-Za-z]\.)+[A-Za-z]?|[A-Za-z]+(?:/[A-Za-z]+)+")


def technical_tokens(sentence: str) -> set[str]:
    """The sentence's code spans and technical tokens (options, paths, keys, identifiers, versions), as
    written (trailing punctuation off). Each must be found verbatim in the passages or the conversation."""
    found = {m.group(1).strip() for m in _CODE_SPAN.finditer(sentence)}
    bare = _CODE_SPAN.sub(" ", sentence)
    for match in _TECHNICAL.finditer(bare):
        token = match.group().rstrip(_TRAILING)
        if len(token) > 1 and not _PROSE.fullmatch(token):
            found.add(token)
    return {t for t in found if t}


def verbatim_key(text: str) -> str:
    """What a verbatim match compares: case and runs of white space do not count."""
    return " ".join(text.lower().split())


def verbatim_pattern(token: str) -> re.Pattern[str]:
    """``token`` as a whole word (never inside a longer one), to search in a ``verbatim_key`` text."""
    return re.compile(rf"(?<![\w]){re.escape(verbatim_key(token))}(?![\w])")


_QUOTES = str.maketrans(dict.fromkeys("'`‘’“”", '"'))
_AROUND_SYMBOL = re.compile(r"\s*([^\w\s])\s*")


def code_key(text: str) -> str:
    """What a code match compares: ``verbatim_key`` with every kind of quote mark one, no space around a
    symbol, and no statement end, so the same command typed two ways is one fact ("PRAGMA journal_mode =
    WAL" and "PRAGMA journal_mode=WAL;"; "`f('a', 1)`" and "f(\"a\",1)")."""
    key = _AROUND_SYMBOL.sub(r"\1", verbatim_key(text).translate(_QUOTES))
    return key.replace(";", " ").strip()


def code_pattern(token: str) -> re.Pattern[str]:
    """``token`` as a whole word, to search in a ``code_key`` text."""
    return re.compile(rf"(?<![\w]){re.escape(code_key(token))}(?![\w])")


def facts_in(sentence: str) -> tuple[set[str], set[str]]:
    """The sentence's numbers and names (see ``numbers_in``, ``names_in``)."""
    return {_normalise_number(m.group()) for m in _NUMBER.finditer(sentence)}, names_in(sentence)


# the prompt labels the passages "[Document N]": naming one ("listed in Document 1") is no fact
_PASSAGE_REFERENCE = re.compile(r"\b(?:documents?|passages?)\s+\d+(?:\s*(?:,|and|&)\s*\d+)*", re.IGNORECASE)


def claim_text(sentence: str) -> str:
    """The sentence without what is no claim of the answer's: "[Passage 1]" markers, "in Document 2"."""
    return _PASSAGE_REFERENCE.sub("", strip_citations(sentence))


_CONNECTIVE = re.compile(r"^\W*(?:however|but|unfortunately)\b,?\s*", re.IGNORECASE)


def says_not_found(sentence: str) -> bool:
    """The sentence says the passages or the writer do not hold something ("I do not have specific
    information about ...", "However, the documents do not provide ..."): a statement about what is
    missing, which no passage backs and which invents nothing (``text.refuses``, the recogniser of
    declines, read on the sentence)."""
    return refuses(_CONNECTIVE.sub("", sentence))


@cache
def _dialogue_stems() -> frozenset[str]:
    return frozenset(content_stems(DIALOGUE_WORDS))


class _Evidence:
    """The passages and the conversation, indexed once for every sentence of an answer."""

    def __init__(self, passages: Sequence[str], conversation: str, question: str = "") -> None:
        self.stems = [set(content_stems(p)) for p in passages]
        self.words = [set(words(p)) for p in passages]
        self.numbers = [numbers_in(p) for p in passages]
        self.quantities = set().union(*(quantities_in(p) for p in passages))
        # the question may supply facts (names, numbers) but not the words that answer it: an answer
        # that only restates the question ("Yes, the government protects us from scams") is backed by
        # nothing unless the passages say it
        self.said_stems = set(content_stems(conversation))
        said = f"{conversation}\n{question}"
        self.said_words = set(words(said))
        self.said_numbers = numbers_in(said)
        self.quantities |= quantities_in(said)
        self.all_stems = set().union(self.said_stems, *self.stems)
        self.all_words = set().union(self.said_words, *self.words)
        self.all_numbers = set().union(self.said_numbers, *self.numbers)
        self.texts = [verbatim_key(p) for p in passages]
        self.said_text = verbatim_key(said)
        self.code_texts = [code_key(p) for p in passages]
        self.said_code = code_key(said)

    def has_name(self, name: str) -> bool:
        """Whether the passages or what was said hold ``name``, or its singular ("the Kolbs" over passages
        that say "Kolb": 4 of 400 MTRAG reference answers lost a sentence to a plural)."""
        return name in self.all_words or (
            len(name) > 3 and name.endswith("s") and name[:-1] in self.all_words
        )

    def holding(self, token: str) -> tuple[bool, set[int]]:
        """Whether what was said holds ``token`` verbatim, and which passages do (never inside a longer
        word): as written, or as code (``code_key``: spacing, quote marks and a statement's ";" aside)."""
        pattern, code = verbatim_pattern(token), code_pattern(token)
        said = bool(pattern.search(self.said_text) or code.search(self.said_code))
        return said, {
            i for i, t in enumerate(self.texts) if pattern.search(t) or code.search(self.code_texts[i])
        }

    def support(self, sentence: str, start: int, end: int, min_support: float) -> SentenceSupport:
        bare = claim_text(sentence)
        stems = set(content_stems(bare))
        numbers, names = facts_in(bare)
        if (
            (not stems and not numbers)
            or LIST_NUMBER.fullmatch(bare)
            or (not numbers and not names and stems <= _dialogue_stems())
            or says_not_found(bare)
        ):
            return SentenceSupport(sentence, start, end, True, 1.0, claim=False)
        missing = sorted(n for n in numbers if n not in self.all_numbers) + sorted(
            n for n in names if not self.has_name(n)
        )
        missing += sorted(q for q in quantities_in(bare) - self.quantities if q.split(" ")[0] not in missing)
        # technical tokens: each in a passage (which the sentence then cites) or said before, verbatim
        token_passages: dict[str, set[int]] = {}
        for token in sorted(technical_tokens(bare)):
            said, where = self.holding(token)
            if not said and not where:
                if _normalise_number(token) not in missing:  # a version is a number too: named once
                    missing.append(token)
            elif not said:
                token_passages[token] = where
        score = sum(s in self.all_stems for s in stems) / len(stems) if stems else 1.0
        # what only the passages can back: words and facts the conversation did not already hold
        to_cover = {("s", s) for s in stems - self.said_stems} | {
            ("n", n) for n in numbers - self.said_numbers
        }
        to_cover |= {("w", w) for w in names - self.said_words}
        to_cover |= {("t", t) for t in token_passages}

        def units(i: int) -> set[tuple[str, str]]:
            return self._units(i) | {("t", t) for t, where in token_passages.items() if i in where}

        cited: list[int] = []
        while to_cover and len(cited) < MAX_CITED:
            gains = [(len(to_cover & units(i)), -i) for i in range(len(self.stems)) if i not in cited]
            if not gains:
                break
            gain, best = max(gains)
            if gain == 0:
                break
            cited.append(-best)
            to_cover -= units(-best)
        missing += self._unsupported_reasons(bare, min_support)
        supported = not missing and score >= min_support
        return SentenceSupport(sentence, start, end, supported, round(score, 4), cited, missing)

    def _unsupported_reasons(self, sentence: str, min_support: float) -> list[str]:
        """A reason or purpose the answer gives ("because it was designed to be more comprehensive") is
        a claim of its own: its clause must reach the support threshold by itself, or the sentence's
        other words (the topic's, all found) would carry an invented cause through."""
        found = []
        for match in _REASON.finditer(sentence):
            clause = sentence[match.end() :]
            stems = set(content_stems(clause))
            if len(stems) < MIN_REASON_STEMS:
                continue
            if sum(s in self.all_stems for s in stems) / len(stems) < min_support:
                found.append(f"{match.group(0).strip()} {' '.join(clause.split()[:8])}")
        return found

    def _units(self, i: int) -> set[tuple[str, str]]:
        return (
            {("s", s) for s in self.stems[i]}
            | {("n", n) for n in self.numbers[i]}
            | {("w", w) for w in self.words[i]}
        )


def sentence_support(
    answer: str, passages: Sequence[str], conversation: str = "", min_support: float = 0.0, question: str = ""
) -> list[SentenceSupport]:
    """Each sentence of ``answer`` with its support by ``passages``. ``conversation`` (the turns before
    the question) may supply words and facts, ``question`` facts only; neither is ever cited."""
    evidence = _Evidence(passages, conversation, question)
    return orphans_dropped(
        [evidence.support(answer[s:e], s, e, min_support) for s, e in sentence_spans(answer)]
    )


# a sentence that opens by pointing back ("This command changes ...", "It also ...", "These are ..."): its
# subject is the sentence before it
_POINTER = re.compile(
    r"^\W*(?:this|that|these|those|such|it|its|they|their|them)\b(?!\s*(?:is|was)\s+(?:why|because|how)\b)",
    re.IGNORECASE,
)
ORPHANED = "points back to a sentence that was dropped"


def orphans_dropped(support: Sequence[SentenceSupport]) -> list[SentenceSupport]:
    """``support`` with a sentence that would open what is left by pointing back to a dropped one ("This
    command changes ...", after the sentence naming the command was dropped) dropped too: what is left
    never opens with a pointer to nothing. A pointer after a kept sentence has something to point to."""
    result: list[SentenceSupport] = []
    opening = True  # no kept claim yet: the next kept sentence would open the answer
    for sentence in support:
        if (
            opening
            and result
            and not result[-1].supported
            and sentence.supported
            and sentence.claim
            and _POINTER.match(claim_text(sentence.text))
        ):
            sentence = SentenceSupport(
                sentence.text, sentence.start, sentence.end, False, sentence.score, sentence.passages,
                [*sentence.unsupported_facts, ORPHANED], sentence.claim,
            )  # fmt: skip
        if sentence.supported and sentence.claim:
            opening = False
        result.append(sentence)
    return result


def unsupported_facts(answer: str, passages: Sequence[str], conversation: str = "") -> list[str]:
    """Numbers and names of ``answer`` found in neither the passages nor the conversation (question included)."""
    return sorted({f for s in sentence_support(answer, passages, conversation) for f in s.unsupported_facts})


def support_entries(support: Sequence[SentenceSupport], passages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The per-sentence support as plain dicts, each with the document ids of the passages it cites."""
    return [
        {**s.as_dict(), "document_ids": [str(passages[i].get("document_id")) for i in s.passages]}
        for s in support
    ]


def grounded_answer(answer: str, support: Sequence[SentenceSupport]) -> str | None:
    """The answer the check lets through: as it was when every sentence stands, without its unsupported
    sentences otherwise, None when it has claims and none of them is supported (the graph abstains)."""
    claims = [s for s in support if s.claim]
    if claims and not any(s.supported for s in claims):
        return None
    return keep_supported(answer, support) if any(not s.supported for s in support) else answer


def keep_supported(answer: str, support: Sequence[SentenceSupport]) -> str:
    """The answer with its unsupported sentences cut out; the rest keeps its layout (lines, bullets). An
    answer's leading yes or no stays when its sentence goes ("Yes, X does Y." -> "Yes.")."""
    text = answer
    for sentence in sorted((s for s in support if not s.supported), key=lambda s: -s.start):
        # a leading yes or no is the answer itself: it stays when the sentence that opens with it goes
        lead = _LEADING_YES_NO.match(sentence.text) if sentence.start == support[0].start else None
        left = f"{lead.group(1)}." if lead else ""
        text = text[: sentence.start] + left + text[sentence.end :]
    lines = [re.sub(r"[ \t]{2,}", " ", line).rstrip() for line in text.splitlines()]
    kept = [line for line in lines if not _EMPTY_ITEM.fullmatch(line)]
    return "\n".join(kept).strip()


_EMPTY_ITEM = re.compile(r"\s*(?:[-*•]|\d+[.)])?\s*")
_LEADING_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def anchored_support(
    answer: str,
    passages: Sequence[str],
    conversation: str = "",
    question: str = "",
    window: int = 2,
    said_in_passage: bool = True,
) -> list[float]:
    """For each claim sentence of ``answer``: the largest share of its content-word stems that one
    passage holds in ``window`` consecutive sentences, the words already said (conversation, question)
    counting wherever that passage holds them.

    ``sentence_support`` looks for each word anywhere in all the passages; an answer forced out of
    on-topic passages that do not hold it ("Hummingbirds are part of the songbirds.") finds every word
    somewhere. A sentence that states what a passage says finds its new words together in one place,
    next to the words that name what it is about. With ``said_in_passage`` False the words already said
    must stand in the stretch too. A sentence without content words scores 1.0.
    """
    said = set(content_stems(f"{conversation}\n{question}")) if said_in_passage else set()
    # the stems each stretch backs: its own, and the said ones its passage holds
    stretches: list[set[str]] = []
    for passage in passages:
        sentences = [set(content_stems(passage[s:e])) for s, e in sentence_spans(passage)]
        said_here = said & set().union(*sentences)
        for i in range(max(1, len(sentences) - window + 1)):
            stretches.append(set().union(*sentences[i : i + window]) | said_here)
    scores = []
    for start, end in sentence_spans(answer):
        stems = set(content_stems(claim_text(answer[start:end])))
        best = max((len(stems & stretch) for stretch in stretches), default=0)
        scores.append(round(best / len(stems), 4) if stems else 1.0)
    return scores
