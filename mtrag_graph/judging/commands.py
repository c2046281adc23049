"""A "how do I ...?" answer quotes the command the passage gives (issue 47, item 1).

The small model names the right command and then paraphrases it: "use the `set datafile separator`
command ... to specify the delimiter" where the manual says "specifying set datafile separator comma";
"the `showHelpAfterError` method" where the README shows ``program.showHelpAfterError();``; the flags
``-v`` and ``--vers`` with the wrong method, where the README shows
``program.version('0.0.1', '-v, --vers', ...)``. What a user needs is the line they can type, and
only the passage holds it verbatim.

So after the grounding check has kept an answer to a how-to question, a passage sentence or code line
that holds technical tokens of the draft or the question (code spans, options, identifiers:
``judging.grounding.technical_tokens``; the draft before the check, whose tokens still point at the
right place when a sentence of it was dropped for another token) and says more than the token itself is
added as a quote: 'The document says: "..."' (the yes/no quote's form). A line to type comes before a
synopsis of alternatives, a code line before a sentence, then the line holding the most tokens
(``command_quote``). The quote is verbatim, so it adds no fact the passages do not hold, and the
grounding check cites its passage. No model call; nothing is added when neither the draft nor the
question names a token a kept passage holds, when the answer already says the line, or when the answer
is a decline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mtrag_graph.judging.grounding import technical_tokens, verbatim_key, verbatim_pattern
from mtrag_graph.judging.yes_no import QUOTE
from mtrag_graph.prompts.excerpts import evidence_spans
from mtrag_graph.text import words

# "How do I ...?", "How can we ...?", "so how would I ...?", "How to ...?", "What command / Which option ...?"
_HOWTO = re.compile(
    r"^\W*(?:(?:so|and|then|ok|okay|but)\W+)?(?:how\s+(?:do|can|could|should|would|might|will)\s+(?:i|we|you|one)"
    r"|how\s+to|(?:what|which)\s+(?:command|option|flag|setting|method|function)s?)\b",
    re.IGNORECASE,
)
_CODE_CHARS = re.compile(r"[(){};=<>\[\]]")
_CODE_LINE_WORDS = 6
# a synopsis's alternatives ("set datafile separator {whitespace | tab | comma | ...}"): the grammar, not a
# line to type, so a sentence that gives the command with its value comes first
_SYNOPSIS = re.compile(r"[{\[][^{}\[\]]*\|[^{}\[\]]*[}\]]")
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))
MIN_TOKEN_CHARS = 3  # "-b", "-V": too short to say which line is meant
_FENCE = re.compile(r"^\s*```.*$", re.MULTILINE)
MAX_QUOTE_WORDS = 45  # a longer sentence is no command line: quoting it would bury the answer


@dataclass(frozen=True)
class CommandQuote:
    passage: int  # index into the kept passages
    text: str  # the sentence or line as the passage has it (white space squeezed)
    tokens: tuple[str, ...]  # the draft's or the question's tokens it holds

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def asks_how(question: str) -> bool:
    """Is ``question`` a how-to question (what to do, or which command does it)?"""
    return bool(_HOWTO.search(question))


def _units(text: str) -> list[str]:
    """The passage's sentences (``evidence_spans``: a wrapped PDF sentence whole), a code block's sentence
    cut to its lines (the fence and a comment line are no command)."""
    units: list[str] = []
    for start, end in evidence_spans(text):
        unit = _FENCE.sub("", text[start:end]).strip()
        lines = [line.strip() for line in unit.splitlines() if line.strip()]
        if len(lines) > 1 and any(_code_line(line) for line in lines):
            units.extend(line for line in lines if not line.startswith(("//", "#")))
        elif unit:
            units.append(" ".join(unit.split()))
    return units


def _is_code(token: str) -> bool:
    """A token a user types: one with a non-letter (``set datafile separator``, ``-p``, ``.addCommand()``)
    or camel case (``showHelpAfterError``); a bare word in capitals ("MODE", "PATH") is a placeholder."""
    return bool(re.search(r"[^A-Za-z]|[a-z][A-Z]", token))


def _code_line(line: str) -> bool:
    """A line of code or a command: a shell prompt, or code punctuation and no code span (a sentence
    names ``.addCommand()`` in backticks; a code line has none)."""
    return "`" not in line and (line.lstrip().startswith("$ ") or bool(_CODE_CHARS.search(line)))


def _looks_like_code(unit: str) -> bool:
    """A command or code line rather than a sentence: ``_code_line``, or a few words without a code span
    or a full stop ("-p --persist", "min_search_length: 2")."""
    if _code_line(unit):
        return True
    short = len(words(unit)) <= _CODE_LINE_WORDS
    return short and "`" not in unit and not unit.rstrip().endswith((".", "!", ":", ","))


def _is_sentence(unit: str) -> bool:
    """A whole sentence: it begins as one (a capital, a digit, a quote or code) and ends with a full stop
    (not a lead-in ending with a colon, not a fragment cut by the passage's window)."""
    return bool(re.match(r"[\W\dA-Z]", unit)) and unit.rstrip().endswith((".", "!"))


def command_quote(
    question: str, draft: str, answer: str, passages: Sequence[Mapping[str, Any]]
) -> CommandQuote | None:
    """The passage sentence or line to quote after ``answer`` (what the grounding check kept of
    ``draft``), or None: not a how-to question, no token of the draft or the question a kept passage
    holds, or the answer says the line already. Of the lines holding a token: a line to type before a
    synopsis of alternatives, a code line before a sentence, then the most tokens, the better-ranked
    passage, the first line."""
    if not asks_how(question):
        return None
    tokens: dict[str, str] = {}
    for token in sorted(technical_tokens(draft) | technical_tokens(question)):
        if len(token) >= MIN_TOKEN_CHARS and _is_code(token):
            tokens.setdefault(verbatim_key(token), token)
    if not tokens:
        return None
    patterns = {key: verbatim_pattern(token) for key, token in tokens.items()}
    best: tuple[tuple[bool, int, int, int, int], CommandQuote] | None = None
    for index, passage in enumerate(passages):
        for position, unit in enumerate(_units(str(passage.get("text") or ""))):
            key = verbatim_key(unit)
            held = tuple(tokens[k] for k, pattern in patterns.items() if pattern.search(key))
            if not held or unit.endswith("?"):
                continue
            unit_words = words(unit)
            if len(unit_words) > MAX_QUOTE_WORDS:
                continue
            if any(unit.count(left) != unit.count(right) for left, right in _PAIRS):
                continue  # cut inside brackets: a cross-reference's "(p." or a line broken mid-call
            code = _looks_like_code(unit)
            if not code and not _is_sentence(unit):
                continue  # a lead-in ("... add the following line to your `.gitignore` file:") or a fragment
            if len(unit_words) <= max(len(words(t)) for t in held):
                continue  # the token alone: nothing the answer does not say
            rank = (not _SYNOPSIS.search(unit), int(code), len(held), -index, -position)
            if best is None or rank > best[0]:
                best = (rank, CommandQuote(index, unit, held))
    if best is None or verbatim_key(best[1].text) in verbatim_key(answer):
        return None
    return best[1]


def with_quote(answer: str, quote: CommandQuote) -> str:
    """``answer`` with the quote after it."""
    return f"{answer.rstrip()}\n\n{QUOTE.format(sentence=quote.text)}"
