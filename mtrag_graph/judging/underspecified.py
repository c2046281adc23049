"""Whether a turn is underspecified: the clarify stage's decision and the English reference heuristics
it is made of.

Does the user's turn point at one specific thing ("this library", "her") that the conversation never
named? ``is_underspecified`` decides, each signal in turn (``SIGNALS``), and a turn without passages that
none of them asks about by the no-passage model (``judging/clarify_no_passages.py``, which reads
``reference_features``). ``kind_and_names`` finds the options a clarifying question names,
``referring_phrase`` what it asks about when there are none. The node that decides and asks is
``nodes/clarify.py``; the decision benchmark (``measure/decisions``) and the research tree call these
functions directly. What tuning these moved: ``benchmarks/results/clarify.md``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence, Set
from os.path import commonprefix
from typing import Any, get_args

from mtrag_graph.context import Context
from mtrag_graph.judging.clarify_no_passages import load_no_passage_model
from mtrag_graph.judging.clarify_options import (
    OWNS,
    as_written,
    modifier_use,
    noun_phrase,
    sensible_options,
    user_noun,
)
from mtrag_graph.models import get_embedder
from mtrag_graph.passages import document_source
from mtrag_graph.stages.clarify import ClarifySignal
from mtrag_graph.text import STOPWORDS, stem, words

# Closed-class words only (determiners, pronouns, auxiliaries): no list of topic nouns. A phrase
# "this/that/these/those <word>" or "the <word>'s" points at one particular thing; when that word
# does not occur in the last exchange, nothing in the conversation says which one.
# "that" is left out: it is mostly a relative pronoun or conjunction ("sources that affect ...")
# "this type of violence" points with "violence"
_KINDS = "type|kind|sort"
_DEMONSTRATIVE = re.compile(
    rf"\b(this|these|those)\s+(?:(?:{_KINDS})s?\s+of\s+)?([a-z][\w-]*)", re.IGNORECASE
)
# the readings the no-passage model was fitted on (its ``unresolved_reference`` feature): "this type",
# and one-word possessives only
_DEMONSTRATIVE_AS_FITTED = re.compile(r"\b(this|these|those)\s+([a-z][\w-]*)", re.IGNORECASE)
# a third-person pronoun on a first turn points at something nobody has named yet
_NAMES_ONE = re.compile(r"(?<=[a-z,] )[A-Z]")  # a capitalised word inside the sentence
_PRONOUN = re.compile(r"\b(it|its|he|him|his|she|her|they|them|their)\b", re.IGNORECASE)
# "the hurricane's", "the police department's" (the head is the last word)
_POSSESSIVE = re.compile(r"\bthe\s+(?:[a-z][\w-]*\s+)?([a-z][\w-]*)'s\b", re.IGNORECASE)
_POSSESSIVE_AS_FITTED = re.compile(r"\bthe\s+([a-z][\w-]*)'s\b", re.IGNORECASE)
_A_SPECIFIC = re.compile(r"\ba specific\s+[a-z]+", re.IGNORECASE)
# "this week", "these days": a demonstrative of time points at now, not at a thing to choose
_TIME_WORDS = frozenset(
    "time times moment day days week weeks weekend month months year years season morning evening night".split()
)
_NOT_A_NOUN = STOPWORDS | _TIME_WORDS | {"means", "mean", "be", "been"}
# "Is this different from ...", "Are these better than ...", "Was this caused by ...": the demonstrative
# is the subject and the word after it the predicate, not a noun it points with
_PREDICATE = re.compile(r"\b(?:is|are|was|were|isn't|aren't)\s+$", re.IGNORECASE)
_PREPOSITION_AFTER = re.compile(r"\s+(?:from|than|to|by)\b", re.IGNORECASE)
# a list of three or more short items ("temp, humidity and wind"; "Spain, Italy, Portugal and Greece"):
# what a later "these/those <noun>" stands for
_ITEM = r"[\w-]+(?: [\w-]+){0,2}"
_LIST = re.compile(rf"\b({_ITEM}), ({_ITEM}),? (?:and|or) ([\w-]+)")


def _lists(text: str, *, names: bool) -> bool:
    """Whether ``text`` lists three or more things, no item's word beside a separator a closed-class word
    (the first item's last word, the others' first: "cool, it forms thunderstorms and ..." lists
    nothing); with ``names``, every item a capitalised name (an answer's "local, state, or federal" is no
    set a user then points at)."""
    for match in _LIST.finditer(text):
        items = [item.split()[-1] if i == 0 else item.split()[0] for i, item in enumerate(match.groups())]
        if any(item.lower() in STOPWORDS for item in items):
            continue
        if not names or all(item[:1].isupper() for item in items):
            return True
    return False


def _points_with(history: Sequence[dict[str, str]], question: str, match: re.Match[str]) -> bool:
    """Whether a "this/these/those <word>" match of the question points at a thing with its word. Not
    when the demonstrative is a copula's subject and the word its predicate ("Is this different from
    text to speech?"), nor for "these/those" when the last exchange listed three or more things, which
    they stand for: the user's own list ("temp, humidity and wind ... those elements"), or an answer's list
    of names ("Spain, Italy, Portugal and Greece ... those countries")."""
    if _PREDICATE.search(question[: match.start()]) and _PREPOSITION_AFTER.match(question, match.end()):
        return False
    if match.group(1).lower() == "this":
        return True
    return not any(_lists(turn["text"], names=turn.get("speaker") != "user") for turn in history[-2:])


def _unnamed_possessive(question: str, named: set[str], pattern: re.Pattern[str] = _POSSESSIVE) -> str | None:
    """The question's first "the <noun>'s" whose noun is not among the ``named`` stems, or None."""
    for match in pattern.finditer(question):
        if stem(match.group(1)) not in named:
            return match.group(0)
    return None


def unresolved_reference(
    history: Sequence[dict[str, str]], question: str, *, as_fitted: bool = False
) -> str | None:
    """A phrase of the question that points at one thing the conversation never names, or None.
    ``as_fitted``: as the no-passage model's feature was computed when it was fitted ("this type of
    violence" read as "this type"; no "the police department's")."""
    named = _named(history)
    demonstrative = _DEMONSTRATIVE_AS_FITTED if as_fitted else _DEMONSTRATIVE
    for match in demonstrative.finditer(question):
        noun = match.group(2)
        if (
            noun.lower() not in _NOT_A_NOUN
            and stem(noun) not in named
            and _points_with(history, question, match)
        ):
            return match.group(0)
    possessive = _unnamed_possessive(question, named, _POSSESSIVE_AS_FITTED if as_fitted else _POSSESSIVE)
    if possessive is not None:
        return possessive
    found = _A_SPECIFIC.search(question)
    if found:
        return found.group(0)
    # ... unless the question names someone itself ("Were Shakespeare's plays popular when he was alive?")
    pronoun = _PRONOUN.search(question) if not history and not _NAMES_ONE.search(question) else None
    if pronoun is None or _resolved_in_turn(question, pronoun):
        return None
    return pronoun.group(0)


_GENDERED = re.compile(r"\b(she|her|hers|he|him|his)\b", re.IGNORECASE)
_FEMININE = frozenset({"she", "her", "hers", "herself"})
_MASCULINE = frozenset({"he", "him", "his", "himself"})
_NAME_BEFORE = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+")  # "Who was Willy Brandt and what did he do?"


# what a first turn asks about: its words beyond stopwords and the words of a request itself ("Can you
# please tell me some information?" says nothing of what about)
_REQUEST_WORDS = frozenset(
    "tell explain provide please summarize summarise give know information info describe details detail list "
    "help show want need like would could some more about anything something things thing hi hello hey "
    "thanks thank".split()
)
# a name, an acronym, a number or a quoted term inside the turn says what it is about ("I" is no name)
_ANCHOR = re.compile(r"(?<=[^\s.?!])\s+(?!I\b)[A-Z]|[A-Z]{2,}|\d|[`\"\u201c]")
# a pointer the other signals weigh against the passages ("this library", "it")
_POINTS = re.compile(r"\b(this|that|these|those|it|its|they|them|their|he|him|his|she|her)\b", re.IGNORECASE)
_DETERMINERS = frozenset({"the", "a", "an", "any", "some"})
BARE_MAX_CONTENT = 2


def bare_first_turn(history: Sequence[dict[str, str]], question: str) -> list[str] | None:
    """The content words of a first turn too bare to answer ("What are the steps?" -> ["steps"], "Is
    there a cure?"), or None. Bare: at most ``BARE_MAX_CONTENT`` content words, one of them led by a
    determiner ("the steps", "a cure", "the main character"), none a plural without one ("Why do bees
    dance?" names its subject), and no name, acronym, number or quoted term. Not bare: a later turn (the
    conversation says what it is about); a turn with "this"/"it" and the like (the other signals weigh
    those against the passages: "When does this library open?" over one library's pages is clear); a turn
    with no content word at all (a greeting, "can you help me": conversational, nothing to narrow).

    MTRAG-UN's underspecified first turns include requests too broad for one answer; the generated set's
    broad form (a question cut before what it is about, ``research/clarify_data.py``) is them. On its
    tuning split this fires on 33 of 37 broad turns (with or without passages) and on none of the 88
    natural first turns; over all of MTRAG's 110 reference first turns on 1 ("How can I delete a key?"),
    and on none of the real-documents set's 76 first questions (benchmarks/results/clarify.md)."""
    if history or _ANCHOR.search(question.strip()) or _POINTS.search(question):
        return None
    said = words(question)
    content = [(i, w) for i, w in enumerate(said) if w not in STOPWORDS and w not in _REQUEST_WORDS]
    if not content or len(content) > BARE_MAX_CONTENT:
        return None
    led = {
        w
        for i, w in content
        if (i > 0 and said[i - 1] in _DETERMINERS)
        or (i > 1 and said[i - 2] in _DETERMINERS and said[i - 1] not in STOPWORDS)
    }
    if not led or any(w.endswith("s") and not w.endswith("ss") and w not in led for _, w in content):
        return None
    return [w for _, w in content]


# "where does it snow", "does it rain": the weather's "it" points at nothing
_WEATHER_IT = re.compile(r"\bit\s+(?:\w+\s+)?(?:snows?|rains?|hails?|storms?|freezes?)\b", re.IGNORECASE)


def orphan_first_turn(history: Sequence[dict[str, str]], question: str) -> str | None:
    """The pointer of a first turn that has nothing to point at, or None: "this novel", "these
    reports" (unless the turn named that noun before: "some states ... these states"; not a time: "this
    week"), or a third-person pronoun before any word of the turn's own that it could stand for ("When
    was it enacted?", "Who was he?"; not a dummy or weather "it", not after a name: "Did Lincoln free
    them?"). On a first turn nothing says what it is: the conversation is empty, and passages retrieved
    or given for it are candidates, not what the user named (``is_underspecified`` calls it with or
    without passages; over MTRAG's 110 reference first turns, with their passages, it asks none). A
    later turn's pointers are weighed against the conversation by the other signals and the no-passage
    model. Over a user's documents the documents rule decides before it."""
    if history:
        return None
    text = question.strip()
    for match in _DEMONSTRATIVE.finditer(text):
        noun = match.group(2).lower()
        if (
            noun not in _NOT_A_NOUN
            and stem(noun) not in {stem(w) for w in words(text[: match.start()])}
            and _points_with(history, text, match)
        ):
            return match.group(0)
    pronoun = _PRONOUN.search(text)
    if pronoun is None or _resolved_in_turn(text, pronoun) or _WEATHER_IT.search(text):
        return None
    if _NAMES_ONE.search(text[: pronoun.start()]):
        return None
    before = [w for w in words(text[: pronoun.start()]) if w not in STOPWORDS and w not in _REQUEST_WORDS]
    return None if before else pronoun.group(0)


def untied_pointer(history: Sequence[dict[str, str]], question: str) -> str | None:
    """A later turn's "this/these/those <noun>" or "the <noun>'s" whose noun no turn says, or None:
    "this library" after an exchange about a clinic, "the hurricane's". The word after the
    demonstrative is the noun, as in ``unresolved_reference``; not a time ("this week"), an adverb
    ("these regionally"), a verb ("this sounds"), or after a name or quoted term in the turn ("the word
    Kubernetes ... this term"), which is what it points at.
    ``is_underspecified`` calls it for a turn without passages only, before the no-passage model, whose
    cosines with the last exchange outweigh such a pointer when the turn stays near the topic. Without
    passages there is nothing to choose from, and the benchmark's reference setting gives none to an
    unanswerable turn either: this asks rather than declines."""
    if not history:
        return None
    named = _named(history)
    for match in _DEMONSTRATIVE.finditer(question):
        if _NAMES_ONE.search(question[: match.start()]) or '"' in question[: match.start()]:
            continue
        after = words(question[match.start(2) :])[:1]
        if not after or after[0] in _NOT_A_NOUN or after[0].endswith("ly"):
            continue
        verb = after[0].endswith("s") and not after[0].endswith(("ss", "us", "is"))
        if (verb and match.group(1).lower() == "this") or not _points_with(history, question, match):
            continue
        if stem(after[0]) not in named | {stem(w) for w in words(question[: match.start()])}:
            return f"{match.group(1)} {after[0]}"
    return _unnamed_possessive(question, named)


def unresolved_person(history: Sequence[dict[str, str]], question: str) -> str | None:
    """A later turn's "she"/"his" with nobody of that gender before it: no capitalised name earlier in
    the turn and no pronoun of that gender anywhere in the conversation ("women astronauts ... her"
    after an exchange about an instrument)."""
    pronoun = _GENDERED.search(question)
    if pronoun is None or _NAME_BEFORE.search(question[: pronoun.start()]):
        return None
    gender = _FEMININE if pronoun.group(1).lower() in _FEMININE else _MASCULINE
    if any(w in gender for turn in history for w in words(turn["text"])):
        return None
    return pronoun.group(0)


# "it" that points at nothing: "is it worth having ...", "it is important to ..." (extraposition)
_DUMMY_IT = re.compile(
    r"\bit\s+(?:is|was|'s)\s+(?:\w+\s+)?\w+\s+(?:to|that|if|when)\b"
    r"|\bis\s+it\s+(?:\w+\s+)?\w+\s+(?:to|that|if|when)\b|\bit\s+worth\b",
    re.IGNORECASE,
)
_PLURAL_NOUN = re.compile(r"\b[a-z]{3,}[^s\W]s\b")  # "stocks", "plans"; not "class", "his"


def _resolved_in_turn(question: str, pronoun: re.Match[str]) -> bool:
    """The turn itself gives the pronoun its sense: a dummy "it", or "they" after a plural noun
    ("Do common stocks ... they represent?")."""
    word = pronoun.group(0).lower()
    if word in ("it", "its"):
        return bool(_DUMMY_IT.search(question))
    return word in ("they", "them", "their") and bool(_PLURAL_NOUN.search(question[: pronoun.start()]))


def untied_pronoun(question: str) -> str | None:
    """The question's first third-person pronoun, unless the turn itself gives it its sense."""
    pronoun = _PRONOUN.search(question)
    return None if pronoun is None or _resolved_in_turn(question, pronoun) else pronoun.group(0)


def unresolved_pronoun(history: Sequence[dict[str, str]], question: str, things: Sequence[str]) -> str | None:
    """A pronoun of the question when neither it nor the conversation names any of ``things`` (what
    the passages speak of, by title: ``passage_things``): nothing ties "it" to one of them."""
    pronoun = _PRONOUN.search(question)
    if pronoun is None or _resolved_in_turn(question, pronoun):
        return None
    said = _said(history, question)
    if any(_mentioned(thing, said) for thing in things):
        return None
    return pronoun.group(0)


def named_in_full(history: Sequence[dict[str, str]], question: str, names: Sequence[str]) -> str | None:
    """The first of the names (of at least two content words) that the conversation says in full, in
    any case ("the great wall of china" for "Great Wall of China"): "the wall" is that one."""
    said = _said(history, question)
    for name in names:
        content = [w for w in words(name.split(" (")[0]) if w not in STOPWORDS]
        if len(content) >= MIN_FULL_NAME_WORDS and all(stem(w) in said for w in content):
            return name
    return None


MIN_FULL_NAME_WORDS = 2  # one common word ("Friends", "Football") is no sign the user meant that one


def names_one_of(phrase: str, things: Sequence[str]) -> bool:
    """The phrase's noun is a word of exactly one of the things: the user named that one ("the README's
    table" with a README and a contributing guide); a noun that several carry names none of them.
    Applied to a user's documents only, whose titles name the documents themselves: on the MTRAG dev
    slice's given passages it cost 2 of 10 caught UNDERSPECIFIED turns (titles there name a topic)."""
    noun = phrase.split()[-1].removesuffix("'s") if " " in phrase else ""
    if not noun:
        return False
    carrying = [thing for thing in things if stem(noun.lower()) in {stem(w) for w in words(thing)}]
    return len(carrying) == 1


def _mentioned(thing: str, said: set[str]) -> bool:
    return any(stem(w) in said for w in words(thing) if w not in STOPWORDS and len(w) > 2)


# adjectives that rank or compare: "the best players" speaks of players
_RANKING = frozenset(
    "best worst most least first last same different other following main whole entire right wrong latest "
    "next previous only oldest newest largest biggest smallest highest lowest".split()
)
_DEFINITE = re.compile(r"\bthe\s+([a-z][a-z-]+)\b(?!\s+of\b)(?!'s)")
_CAPITALISED = r"[A-Z][\w'.&-]*[\w]"
_TITLE_HEAD = re.compile(r"\s+[|\u2013-]\s+")
MAX_NAME_WORDS = 6


def unresolved_definite(history: Sequence[dict[str, str]], question: str) -> list[str]:
    """Nouns of "the <noun>" phrases that the conversation never names ("the clinic", "the park"); after
    an adjective that only ranks or compares, the next word ("the oldest trophy": "trophy")."""
    named = _named(history)
    nouns = []
    for match in _DEFINITE.finditer(question):
        noun = match.group(1).lower()
        if noun in _RANKING:
            following = re.match(r"\s+([a-z][a-z-]+)\b", question[match.end() :])
            noun = following.group(1) if following else noun
        if noun not in _NOT_A_NOUN and stem(noun) not in named and noun not in nouns:
            nouns.append(noun)
    return nouns


# "the/this/these/those" (and "that" before a capitalised word: "that NASA mission"; before a lower-case
# one it is mostly a relative pronoun) opening the user's noun phrase
_OPENS_PHRASE = re.compile(r"\b(the|this|these|those|that)\s+", re.IGNORECASE)
# how many of the passages' titled things must carry the phrase's head word before "the <head>" is asked
# about: with two, one is often the answer and the other an incidental passage (chosen on the MTRAG-UN
# tuning slice against MTRAG's 777 answerable turns, benchmarks/results/clarify.md)
MIN_CARRIERS = 3


def _thing_stems(passages: Sequence[dict[str, Any]] | None) -> list[tuple[str, set[str], set[str]]]:
    """Each titled passage set once by its whole title (an untitled one by the name it uses most): the
    title, its title's content stems, and those with the stems of its text's head."""
    texts: dict[str, list[str]] = {}
    for passage in passages or []:
        text = str(passage.get("text", ""))
        title = " ".join(str(passage.get("title") or "").split()) or untitled_name(text)
        if title:
            texts.setdefault(title, [title]).append(text[:PASSAGE_HEAD_CHARS])
    out = []
    for title, parts in texts.items():
        in_title = {stem(w) for w in words(title) if w not in STOPWORDS and len(w) > 2}
        out.append(
            (title, in_title, in_title | {stem(w) for w in words(" ".join(parts)) if w not in STOPWORDS})
        )
    return out


def several_named(
    history: Sequence[dict[str, str]], question: str, passages: Sequence[dict[str, Any]] | None
) -> tuple[str, str, list[str]] | None:
    """A definite noun phrase of the user's ("the TV series", "the Superior Court", "this type") whose head
    at least ``MIN_CARRIERS`` of the passages' things carry (in the title or the text's head) while
    nothing the user or the conversation said singles one out: no word that only one thing's title has
    ("Pride and Prejudice (1995 TV series)", "Blackwater (Game of Thrones)", "The Shannara Chronicles" for
    "the author of the book the TV series is based on"). The head itself does not single out ("series"
    in one title is still a series). Not a phrase the conversation named word for word, "the time", a
    ranking ("the best river": every river), a name the user says in full ("the great wall of China").
    Returns the phrase, its head as written, and the carrying titles; or None."""
    things = _thing_stems(passages)
    if len(things) < MIN_CARRIERS:
        return None
    named = _named(history)
    said = _said(history, question)
    df = Counter(s for _, in_title, _ in things for s in in_title)
    for match in _OPENS_PHRASE.finditer(question):
        determiner = match.group(1).lower()
        if determiner == "that" and not question[match.end() : match.end() + 1].isupper():
            continue
        phrase = noun_phrase(question, match.end())
        if not phrase or phrase[0].lower() in _NOT_A_NOUN or phrase[0].lower() in _RANKING:
            continue
        head = OWNS.sub("", phrase[-1])
        if head.lower() in _NOT_A_NOUN or len(head) < 3:
            continue
        content = [stem(w.lower().removesuffix("'s")) for w in phrase if w.lower() not in STOPWORDS]
        if all(c in named for c in content) if determiner == "the" else stem(head.lower()) in named:
            continue  # the conversation said it
        carriers = [title for title, _, full in things if stem(head.lower()) in full]
        if len(carriers) < MIN_CARRIERS or named_in_full(history, question, carriers) is not None:
            continue
        singling = {s for s, n in df.items() if n == 1} - {stem(head.lower())}
        if not singling & said:
            return f"{match.group(0)}{' '.join(phrase)}", head, carriers
    return None


def _named(history: Sequence[dict[str, str]]) -> set[str]:
    """Stems of the whole conversation: a thing named three turns ago ("the novel") is still named."""
    return {stem(w) for turn in history for w in words(turn["text"])}


def _said(history: Sequence[dict[str, str]], question: str) -> set[str]:
    """Stems of the conversation and the question."""
    return _named(history) | {stem(w) for w in words(question)}


_SITE_PAGE = (".html", ".htm", ".xhtml")
MIN_DOCUMENT_PASSAGES = 2  # a document with one stray kept passage is no rival referent


def document_of(passage: Mapping[str, Any]) -> str | None:
    """The document a passage was cut from (``mtrag-graph index``), or None for a corpus passage: the
    file, or for a page of a site (HTML) its folder. Pages and sections of one manual are one thing
    the user asks about, not rival referents ("Introduction" and "Environment Configuration Settings"
    of one manual)."""
    found = document_source(str(passage.get("document_id") or ""))
    if found is None:
        return None
    source = found[0]
    folder, _, name = source.rpartition("/")
    return (folder or source) if name.lower().endswith(_SITE_PAGE) else source


def document_groups(passages: Sequence[dict[str, Any]] | None) -> dict[str, list[dict[str, Any]]]:
    """The kept passages cut from users' documents, by document (see ``document_of``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for passage in passages or []:
        document = document_of(passage)
        if document is not None:
            groups.setdefault(document, []).append(passage)
    return groups


def passage_things(passages: Sequence[dict[str, Any]] | None) -> list[str]:
    """The different things the passages speak of, by title: its first part and, in brackets, its
    second ("Adults (Monterey Park, CA)"), once per first part (one name inside another: the same).
    An untitled passage (a fiqa post) by the name it uses most; one that names nothing is left out.
    Passages cut from a user's documents count once per document (``document_of``), by the title of its
    first kept passage, and only a document that holds ``MIN_DOCUMENT_PASSAGES`` of them."""
    groups = document_groups(passages)
    representatives = [
        group[0] for group in groups.values() if len(group) >= min(MIN_DOCUMENT_PASSAGES, len(passages or []))
    ]
    passages = [*representatives, *(p for p in passages or [] if document_of(p) is None)]
    things: list[str] = []
    heads: list[str] = []
    for passage in passages:
        title = " ".join(str(passage.get("title") or "").split())
        title = title or untitled_name(str(passage.get("text", "")))
        parts = [p for p in _TITLE_HEAD.split(title) if p]
        if parts and not any(_is_same(parts[0], head) for head in heads):
            heads.append(parts[0])
            things.append(parts[0] if len(parts) == 1 else f"{parts[0]} ({parts[1]})")
    return things


def alternatives(noun: str, passages: Sequence[dict[str, Any]] | None) -> list[str]:
    """Names in the passages that carry the noun as a capitalised word ("Hibbing VA Clinic",
    "Hurricane Katrina" for "clinic", "hurricane"): the things of that kind, each once, in order."""
    # the part the noun shares with its stem: "librar" of "library" (stem "librari") matches "Libraries"
    head = commonprefix([noun.lower(), stem(noun)]) or noun.lower()
    word = rf"{head[0].upper()}{re.escape(head[1:])}\w*"
    name = re.compile(rf"((?:{_CAPITALISED}\s+){{0,4}}{word}(?:\s+(?:of\s+)?{_CAPITALISED}){{0,3}})")
    found: list[str] = []
    for passage in passages or []:
        for source in (str(passage.get("title") or ""), str(passage.get("text", ""))[:PASSAGE_HEAD_CHARS]):
            for piece in _TITLE_HEAD.split(source):
                for match in name.finditer(piece):
                    name_words = match.group(1).split()
                    if 2 <= len(name_words) <= MAX_NAME_WORDS and not any(
                        _is_same(" ".join(name_words), seen) for seen in found
                    ):
                        found.append(" ".join(name_words))
    return found


PASSAGE_HEAD_CHARS = 300
# a name inside a sentence: capitalised words (and "of"), not the sentence's first word
_NAME_IN_TEXT = re.compile(rf"(?<=[\w,;()] )({_CAPITALISED}(?:\s+(?:of\s+)?{_CAPITALISED}){{0,3}})")


_CONTRACTION = re.compile(r"\w+'(?!s$)\w+")  # "I'm", "WON'T": a sentence's start, not a name


def untitled_name(text: str, least: int = 1) -> str:
    """What an untitled passage (a fiqa post) speaks of: the name it uses most often inside its
    sentences ("Roth IRA", "Vanguard"), the first one on a tie; "" when it names nothing (nothing
    at least ``least`` times)."""
    counts: dict[str, int] = {}
    for match in _NAME_IN_TEXT.finditer(text):
        name = match.group(1)
        first = name.split()[0]
        if first.lower() not in STOPWORDS and not _CONTRACTION.fullmatch(first) and len(name) > 1:
            counts[name] = counts.get(name, 0) + 1
    best = max(counts, key=lambda name: counts[name], default="")
    return best if best and counts[best] >= least else ""


UNTITLED_NAME_USES = 3  # an untitled post's name counts for the pronoun signal when used this often


def _strongly_named(passages: Sequence[dict[str, Any]] | None) -> list[str]:
    """The names untitled passages use at least ``UNTITLED_NAME_USES`` times, each once."""
    names = [
        untitled_name(str(p.get("text", "")), UNTITLED_NAME_USES)
        for p in passages or []
        if not str(p.get("title") or "").strip()
    ]
    return [name for name in dict.fromkeys(names) if name]


def _is_same(a: str, b: str) -> bool:
    """One name inside the other ("State Library" in "California State Library"): the same thing."""
    a, b = a.lower(), b.lower()
    return a in b or b in a


SIGNALS: tuple[ClarifySignal, ...] = get_args(ClarifySignal)
# how many different things (titles; for "the <noun>", names of that kind) the passages must speak of
# before an unresolved reference is asked about: with one, there is nothing to choose from
MIN_THINGS = 2


def is_underspecified(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    context: Context,
    *,
    retrieved: bool = False,
) -> tuple[bool, list[str]]:
    """The clarify decision alone: True = underspecified. No language-model call.

    Over a user's documents the documents rule decides (``_underspecified_over_documents``). Else the
    signals below, in turn; a turn without passages that none of the model-free ones asks about is
    decided by ``without_passages`` (``Context.clarify_no_passages``: its reference features and its
    cosines with the last exchange; None: it is not asked).

    A reference the conversation does not resolve, and passages that speak of several different
    things, is the sign that the user must say which. Each evidence line starts with the signal that
    decided (``rivals``, ``rule``, ``passages``, ...), so the benchmark can report each signal's share:

    ``rivals``, first: a turn without passages that points by its kind at one of several things the
       last answer named ("How is this type of charge calculated?" after "The types of charges are
       Fixed, Metered, Tiered, and Reserved."; ``rival_reference``).
    0. ``bare``: a first turn without passages, with at most ``BARE_MAX_CONTENT`` content words and no
       name, number or quoted term ("What are the steps?", "Is there a cure?"): nothing says what it is
       about (``bare_first_turn``); before the no-passage model, after the options that replace it. With
       passages the signals below decide ("What does the clinic offer?" over one clinic's pages is clear).
    0b. ``orphan``: a first turn whose "this <noun>" or leading pronoun has nothing to point at ("When
       was it enacted?", "Does this animal have antlers ...?"; ``orphan_first_turn``), with or without
       passages, beside ``bare``.
    0c. ``pointer``: a later turn without passages whose "this <noun>" or "the <noun>'s" points at
       something the conversation never named (``untied_pointer``), before the no-passage model.
    0d. ``kinds``: a later turn without passages whose "the <noun>" leaves open which of several kinds
       of it an agent turn named ("the SDK" after "Server-side SDKs, Client-side SDKs, and Admin SDKs";
       ``rival_kinds``), at least two of them about the question (``sensible_kinds``), after ``pointer``.
    1. ``rule``: a demonstrative or possessive phrase whose word the conversation never mentions
       ("this library" after a conversation about a clinic, "the hurricane's" on a first turn; not a
       time: "this week"), "a specific ...", or a first turn's pronoun, and passages about at least
       ``MIN_THINGS`` different things (distinct titles; an untitled passage by the
       name it uses most). Without such passages the turn is answered (or declined) as usual: a
       question with nothing to choose from helps no one, and an UNANSWERABLE turn has no passages.
    2. ``pronoun``: a later turn's pronoun ("Did it air abroad?") when neither the turn nor the
       conversation names a word of any title of the passages, which speak of at least
       ``MIN_THINGS`` different titled things.
    3. ``passages``: "the <noun>" that the conversation never names, and passages naming at least
       ``MIN_THINGS`` different things of that kind ("the clinic" with "Hibbing VA Clinic",
       "Hayward VA Clinic"), none of which the conversation names in full.
    4. ``person``: a later turn's "she"/"his" with nobody of that gender before it (no name earlier in
       the turn, no pronoun of that gender in the conversation), over at least ``MIN_THINGS``
       titled things.
    5. ``definite``: "the <noun>" that the conversation never names, over at least
       ``MIN_THINGS`` titled things none of which the conversation or the turn names ("the
       country" after an exchange about Cahokia, passages about Israel and Egypt).
    6. ``several``: a definite noun phrase ("the TV series", "the Superior Court") whose head at least
       ``MIN_CARRIERS`` of the passages' things carry, none singled out by a word only its title has
       (``several_named``).
    ``Context.clarify_signals`` says which of these may decide (all by default). No model judges the
    turn: the 1.5B's "unclear" probability did not separate the classes (benchmarks/results/clarify.md).
    Returns the decision and the evidence.
    """
    on = set(context.clarify_signals)
    if on - set(SIGNALS):
        raise ValueError(f"clarify_signals: unknown {sorted(on - set(SIGNALS))}; known: {', '.join(SIGNALS)}")
    if passages and all(document_of(p) is not None for p in passages):
        return _underspecified_over_documents(history, question, passages, on)
    rival = rival_reference(history, question) if not passages and "rivals" in on else None
    if rival is not None:  # model-free, before any decision for turns without passages
        return True, [f"rivals: '{rival}' after an answer that named several of that kind"]
    bare = bare_first_turn(history, question) if not passages and "bare" in on else None
    if bare is not None:  # model-free, before the no-passage model: nothing else says what it is about
        return True, [f"bare: a first turn with only '{' '.join(bare)}' to say what it is about"]
    # with passages too: "Does this animal have antlers ...?" opening a conversation names no animal,
    # whatever the passages are about (MTRAG's 110 reference first turns, with their passages: none asked)
    orphan = orphan_first_turn(history, question) if "orphan" in on else None
    if orphan is not None:  # model-free, as "bare": a first turn's pointer with nothing to point at
        return True, [f"orphan: '{orphan}' on a first turn, with nothing named for it to point at"]
    pointer = untied_pointer(history, question) if not passages and "pointer" in on else None
    if pointer is not None:  # model-free, as "orphan" for a later turn: its kind was never named
        return True, [f"pointer: '{pointer}' points at something the conversation never named"]
    kinds = rival_kinds(history, question) if not passages and "kinds" in on else None
    # as "pointer", and only with two kinds about what the user asked (one embedding call)
    sensible = sensible_kinds(kinds, question, context) if kinds is not None else []
    if kinds is not None and len(sensible) >= MIN_KINDS:
        return True, [
            f"kinds: 'the {kinds[0]}' after an answer that named {len(kinds[1])} kinds of it, "
            f"{len(sensible)} about the question"
        ]
    if not passages and context.clarify_no_passages is not None:
        return without_passages(history, question, context.clarify_no_passages)
    things = passage_things(passages)
    phrase = unresolved_reference(history, question)
    if (
        "rule" in on
        and phrase is not None
        and len(things) >= MIN_THINGS
        and not (document_groups(passages) and names_one_of(phrase, things))
    ):
        return True, [f"rule: unresolved reference '{phrase}', {len(things)} things in the passages"]
    # a later turn's pronoun: only titles say what a passage speaks of reliably enough (an untitled
    # post's most used name is often incidental)
    titled = passage_things([p for p in passages or [] if str(p.get("title") or "").strip()])
    # given passages (not retrieved ones): an untitled post that names one thing again and again
    # ("Roth IRA" three times) says what it speaks of as a title would
    named = titled if retrieved else [*titled, *_strongly_named(passages)]
    pronoun = unresolved_pronoun(history, question, named) if history and "pronoun" in on else None
    if pronoun is not None and len(named) >= MIN_THINGS:
        return True, [f"pronoun: '{pronoun}', none of the {len(named)} titled or often-named things named"]
    definite = unresolved_definite(history, question)
    # names of one kind inside one manual ("the server": "REST API Server", "Patroni Server") are its
    # parts, not rival referents: with every passage from one user document, this signal is off
    one_document = len(document_groups(passages)) == 1 and all(document_of(p) for p in passages or [])
    for noun in definite if "passages" in on and not one_document else []:
        found = alternatives(noun, passages)
        if len(found) >= MIN_THINGS and named_in_full(history, question, found) is None:
            return True, [f"passages: 'the {noun}' with {len(found)} of that kind: {'; '.join(found[:3])}"]
    if len(titled) >= MIN_THINGS:
        person = unresolved_person(history, question) if history and "person" in on else None
        if person is not None:
            return True, [
                f"person: '{person}', nobody of that gender in the conversation, {len(titled)} titled things"
            ]
        if "definite" in on and definite:
            # the noun itself names none of them ("the play" and "Richard III (play)")
            said = _said(history, question) - {stem(definite[0])}
            if not any(_mentioned(thing, said) for thing in titled):
                return True, [f"definite: 'the {definite[0]}', none of the {len(titled)} titled things named"]
    several = several_named(history, question, passages) if "several" in on else None
    if several is not None:
        return True, [f"several: '{several[0]}' carried by {len(several[2])} things, none singled out"]
    return False, ["no unresolved reference" if phrase is None else f"'{phrase}', too few things"]


MAX_FEATURE_WORDS = 30


def _capitalised_inside(question: str) -> bool:
    tokens = question.split()
    return any(t[:1].isupper() and t.lower().strip("?,.!'\"") not in STOPWORDS for t in tokens[1:]) or any(
        t.isupper() and len(t) > 1 for t in tokens[:1]
    )


def reference_features(history: Sequence[dict[str, str]], question: str) -> dict[str, float]:
    """The model-free features of a turn (no embedding) that the no-passage model reads: what points at
    something, what the conversation names."""
    question_words = words(question)
    history_stems = {stem(w) for turn in history for w in words(turn["text"])}
    content = [stem(w) for w in question_words if w not in STOPWORDS and len(w) > 2]
    untied = untied_pronoun(question) is not None
    features = {
        "first_turn": float(not history),
        "words": min(len(question_words), MAX_FEATURE_WORDS) / MAX_FEATURE_WORDS,
        "capitalised_name": float(_capitalised_inside(question)),
        "number": float(any(c.isdigit() for c in question)),
        "pronoun": float(untied),
        "pronoun_first_turn": float(untied and not history),
        "unresolved_reference": float(unresolved_reference(history, question, as_fitted=True) is not None),
        "unresolved_definite": float(bool(unresolved_definite(history, question))),
        "unresolved_person": float(bool(history) and unresolved_person(history, question) is not None),
        "new_words": (sum(c not in history_stems for c in content) / len(content)) if content else 0.0,
    }
    return features


# "this type of charge", "that special rule": a demonstrative, then up to two words (an adjective may
# come before the noun). Not "the": all 11 of MTRAG's natural reference turns it would fire on with "the"
# too are ANSWERABLE turns about a thing the conversation had settled ("the basin", "the breed")
_POINTER = re.compile(
    rf"\b(?:this|that|these|those)\s+(?:(?:{_KINDS})s?\s+of\s+)?([a-z][a-z-]{{2,}})(?:\s+([a-z][a-z-]{{2,}}))?\b"
)


def _plurals(noun: str) -> set[str]:
    return {noun + "s", noun + "es", *([noun[:-1] + "ies"] if noun.endswith("y") else [])}


def rival_reference(history: Sequence[dict[str, str]], question: str) -> str | None:
    """What a turn without passages points at by its kind when the last answer named several of that
    kind: "How is this type of charge calculated?" after "The types of charges are Fixed, Metered,
    Tiered, and Reserved." -> "charge". Not a noun the question names ("this IRA account", "that CIS
    bot": a capitalised word), not after a ranking word ("that last option"), not a time ("this year"),
    not a plural. "One of them" is no sign: "Can I restore one of them to a different region?" after an
    answer about backups means any of them. None otherwise.

    The turns MTRAG-UN gives no passages for and the no-passage model never asks: they stay on the
    topic ("this case" after an answer about cases). On a hand-written set of such turns from MTRAG's
    reference conversations (``research/data/clarify_rivals.jsonl``) it fires on most and on none of
    their answerable twins; on none of MTRAG's 65 UNANSWERABLE and CONVERSATIONAL reference turns
    (benchmarks/results/clarify.md)."""
    agents = [t["text"] for t in history if t.get("speaker") == "agent"]
    if not agents:
        return None
    said = set(words(agents[-1]))
    for match in _POINTER.finditer(question.lower()):
        first, second = match.group(1), match.group(2)
        if first in _RANKING or question[match.start(1)].isupper():
            continue  # "that last option"; "this IRA account" names one
        for noun, at in ((first, match.start(1)), (second, match.start(2))):
            if not noun or noun in _NOT_A_NOUN or noun.endswith("s") or not (said & _plurals(noun)):
                continue
            before = question[:at].rstrip().split(" ")[-1:]  # the word before the noun, case kept
            if before and re.fullmatch(_CAPITALISED, before[0]):
                continue  # "the Hudson River": named
            return noun
    return None


# "the SDK" and the word after it (not "the SDK's")
_THE_NOUN = re.compile(r"\bthe\s+([A-Za-z][\w-]+)\b(?!['\u2019]s)(\s+[A-Za-z][\w-]*|\s*[?.,;:!]|\s*$)")
# words that say which one or how many, not what kind: "the other SDKs", "several SDKs" (and those that
# rank or compare, ``_RANKING``: "the best SDK")
_NOT_A_KIND = STOPWORDS | _RANKING | frozenset("above new old various several many some each both".split())
MIN_KINDS = 2


def named_kinds(history: Sequence[dict[str, str]], noun: str) -> list[str]:
    """The kinds of ``noun`` that one agent turn names with a word before it ("Server-side SDKs,
    Client-side SDKs, and Admin SDKs" -> ["Server-side", "Client-side", "Admin"]; "lunar eclipse" and
    "solar eclipse"): the turn naming most of them; not a word that only counts or ranks ("other",
    "several"), a number, or a verb's or adverb's form ("-ing", "-ed", "-ly")."""
    phrase = re.compile(r"\b([A-Za-z][\w-]+)\s+" + re.escape(noun) + r"(?:s|es)?\b")
    best: list[str] = []
    for turn in history:
        if turn.get("speaker") != "agent":
            continue
        kinds: dict[str, str] = {}
        for match in phrase.finditer(turn["text"]):
            word = match.group(1)
            lower = word.lower()
            if lower in _NOT_A_KIND or lower == noun.lower() or lower.endswith(("ing", "ed", "ly")):
                continue
            if not word.isdigit():
                kinds.setdefault(stem(lower), word)
        if len(kinds) > len(best):
            best = list(kinds.values())
    return best


def _said_together(history: Sequence[dict[str, str]], first: str, second: str) -> bool:
    together = re.compile(rf"\b{re.escape(first)}\s+{re.escape(second)}", re.IGNORECASE)
    return any(together.search(turn["text"]) for turn in history)


def rival_kinds(history: Sequence[dict[str, str]], question: str) -> tuple[str, list[str]] | None:
    """A later turn's "the <noun>" after an agent turn that named several kinds of that noun, none of
    which the turn names: "What are the best practices for using the SDK?" after "There are three main
    types of SDKs: Server-side SDKs, Client-side SDKs, and Admin SDKs." -> ("SDK", ["Server-side",
    "Client-side", "Admin"]). The noun is a lower-case word or an acronym, singular, not the first word
    of a phrase the conversation says ("the cotton gin" after "the single-roller cotton gin"), not a
    modifier of a plural noun ("the key aspects": ``clarify_options.modifier_use``). None otherwise.
    ``is_underspecified`` calls it for a turn without passages (signal ``kinds``): the no-passage model
    reads such a turn as on the topic, and ``rival_reference`` looks only at "this <noun>" and the last
    answer."""
    if not history:
        return None
    asked = {stem(w) for w in words(question)}
    for match in _THE_NOUN.finditer(question):
        noun, after = match.group(1), match.group(2).strip()
        if noun.lower() in _NOT_A_KIND or len(noun) < 3 or (noun[0].isupper() and not noun.isupper()):
            continue  # "the Hudson": a name
        if noun.endswith("s") and not noun.endswith(("ss", "us", "is")):
            continue  # "the cyclones": the kind as a whole, not one of its kinds
        if after[:1].isalpha() and after.lower() not in STOPWORDS and _said_together(history, noun, after):
            continue  # "the cotton gin" after an answer on the cotton gin: the noun only begins the phrase
        if modifier_use(question, noun):
            continue  # "the key aspects": "key" as in "main", no kind of key is a reading
        kinds = named_kinds(history, noun)
        if len(kinds) >= MIN_KINDS and not asked & {stem(k.lower()) for k in kinds}:
            return noun, kinds
    return None


def kind_options(kinds: tuple[str, list[str]]) -> list[str]:
    """The kinds ``rival_kinds`` found, as a question names them: ("SDK", ["Admin"]) -> ["Admin SDK"]."""
    noun, named = kinds
    return [f"{kind} {noun}" for kind in named]


def sensible_kinds(kinds: tuple[str, list[str]], question: str, context: Context) -> list[str]:
    """``kind_options`` that are about the question (``clarify_options.sensible_options`` under
    ``Context.embedder``)."""
    return sensible_options(kind_options(kinds), question, get_embedder(context.embedder).embed)


def without_passages(history: Sequence[dict[str, str]], question: str, spec: str) -> tuple[bool, list[str]]:
    """A turn without passages decided by ``Context.clarify_no_passages`` (``judging/clarify_no_passages.py``):
    its reference features and its cosines with the last exchange, no model call."""
    model = load_no_passage_model(spec)
    values = model.values(reference_features(history, question), history, question)
    probability = model.probability(values)
    shown = ", ".join(f"{name}={values[name]:.2f}" for name in model.features if values[name])
    return probability >= model.threshold, [
        f"no-passages: p={probability:.3f}, threshold {model.threshold:.3f} ({shown or 'all zero'})"
    ]


def _underspecified_over_documents(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]],
    on: Set[str],
) -> tuple[bool, list[str]]:
    """Over a user's documents (every passage cut by ``mtrag-graph index``) the titles are documents,
    pages and sections, not the things a conversation refers to: "it" after a turn about the REST API is
    the REST API, whatever pages come back, and "the RFC" needs no choosing when only one RFC is named.
    A turn is asked back only when its unresolved noun ("this option", "the server") has names of that
    kind in two or more of the documents and the conversation names none of them in full."""
    phrase = unresolved_reference(history, question) if "rule" in on else None
    nouns = [phrase.split()[-1].removesuffix("'s").lower()] if phrase and " " in phrase else []
    nouns += unresolved_definite(history, question) if {"passages", "definite"} & on else []
    for noun in dict.fromkeys(nouns):
        by_document = {doc: alternatives(noun, group) for doc, group in document_groups(passages).items()}
        names = list(dict.fromkeys(name for found in by_document.values() for name in found))
        documents = [doc for doc, found in by_document.items() if found]
        if (
            len(documents) >= 2
            and len(names) >= MIN_THINGS
            and named_in_full(history, question, names) is None
        ):
            return True, [f"documents: '{noun}' names {len(names)} things in {len(documents)} documents"]
    return False, ["documents: no unresolved noun with names in two documents"]


_KIND_OF = re.compile(rf"\b({_KINDS})s?\s+of\s+", re.IGNORECASE)


def kind_and_names(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    *,
    several: bool = False,
) -> tuple[str, list[str]]:
    """The reference's noun, as the user wrote it, and the names of that kind in the passages ("clinic",
    [...]); the head of the user's phrase is tried before the word after its determiner ("this tricolor
    national flag": "flag", then "tricolor"). Without two such names, when ``several`` decided the turn,
    its phrase's head and the first parts of its things' titles (none when two are alike); else "one" and
    the passages' titles."""
    phrase = unresolved_reference(history, question)
    nouns = [phrase.split()[-1].removesuffix("'s")] if phrase and " " in phrase else []
    # "this type of violence": the question asks which type ("Which type of violence do you mean: ...?")
    kind_of = _KIND_OF.search(phrase) if phrase else None
    for noun in [*nouns, *unresolved_definite(history, question)]:
        for word in dict.fromkeys([user_noun(question, noun), as_written(question, noun)]):
            names = alternatives(word, passages)
            if len(names) >= 2:
                return (f"{kind_of.group(1)} of {word}" if kind_of and noun == nouns[0] else word), names
    found = several_named(history, question, passages) if several else None
    if found is not None:  # "Which series do you mean: ...?" over the things that carry "series"
        heads = [_TITLE_HEAD.split(title)[0] for title in found[2]]
        # heads that repeat ("Jury Service | ... | County of Alameda", "Jury Service | ... | County of
        # Tulare") do not tell the things apart: no options, the question asks in the user's word
        return found[1], heads if len({h.lower() for h in heads}) == len(heads) else []
    return "one", passage_things(passages)


_SUBJECT_FORM = {"its": "it", "him": "he", "his": "he", "her": "she", "them": "they", "their": "they"}


def referring_phrase(history: Sequence[dict[str, str]], question: str) -> tuple[str, str] | None:
    """What the question points at without saying which: ("noun", "program") for "this program", "the
    program" or "a specific program" that the conversation never names, the head of the user's phrase as
    the user wrote it ("this TV sitcom" -> "sitcom", "the SDK" -> "SDK"; ``clarify_options.user_noun``);
    ("pronoun", "it") for a pronoun the turn does not resolve itself (in its subject form: "its" ->
    "it"); None when it has neither."""
    phrase = unresolved_reference(history, question)
    if phrase is not None:
        noun = phrase.split()[-1].removesuffix("'s")
        if " " in phrase:
            return "noun", user_noun(question, noun)
        return "pronoun", _SUBJECT_FORM.get(noun.lower(), noun.lower())
    definite = unresolved_definite(history, question)
    if definite:
        return "noun", user_noun(question, definite[0])
    pronoun = untied_pronoun(question)
    if pronoun is None:
        return None
    return "pronoun", _SUBJECT_FORM.get(pronoun.lower(), pronoun.lower())


ASKING_WORDS = frozenset("mean meant referring refer asking specify specific clarify which one".split())


def restates(asked: str, question: str) -> bool:
    """A question that adds no content word to the user's only repeats it ("Does this clinic ...?")."""
    said = {stem(w) for w in words(question)}
    added = {stem(w) for w in words(asked) if len(w) > 2}
    return not (added - said - {stem(w) for w in _NOT_A_NOUN | ASKING_WORDS})
