"""What a clarifying question names: the thing asked about, in the user's own words, and options that
are about what the user asked.

``noun_phrase`` reads the noun phrase after a determiner as the user wrote it, its head last: "this TV
sitcom" is about a sitcom, not a "tv" (the word right after the determiner, which the signals of
``judging/underspecified.py`` test, is often a modifier: "this state library", "the fast food chain",
"this particular index fund"). ``user_noun`` gives that head for a noun a signal found, so the question
reads "Which sitcom do you mean?".

``modifier_use`` is the sense check: "the key aspects" uses "key" as a modifier of a plural noun, so
kinds of key an earlier answer named ("session key", "secret key") are no readings of the question.
``sensible_options`` is the embedding check: an option far from the user's question in the embedder's
space (``OPTION_MIN_SIMILARITY``) is about something else and is dropped. The clarify node names the
options left, or asks plainly when fewer than two are (``nodes/clarify.py``); the ``kinds`` signal does
not fire without two (``judging.underspecified.is_underspecified``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from mtrag_graph.text import STOPWORDS

Embed = Callable[[Sequence[str]], np.ndarray]  # texts to L2-normalised rows (``Embedder.embed``)

# closed-class words that end a noun phrase but are not STOPWORDS: prepositions ("the secret behind"),
# reflexives
_PREPOSITIONS = frozenset(
    "regarding concerning including behind beside besides beyond per via within without across along among "
    "amongst around against toward towards upon versus vs near since despite except outside inside beneath "
    "underneath alongside throughout itself themselves".split()
)
_DO_OR_MODAL = frozenset("do does did can could will would shall should may might must".split())
_COPULA = frozenset("is are was were".split())
_AUXILIARIES = _DO_OR_MODAL | _COPULA
_ASKING_HOW = frozenset("when where why how".split())
_DETERMINERS = frozenset("the this that these those a an".split())
# verbs among the stopwords: a subject noun phrase before one has ended ("does the storm drain have ...")
_VERB_STOPWORDS = _AUXILIARIES | frozenset("be been being am have has had get got do done".split())
_PHRASE_TOKEN = re.compile(r"(?:[A-Z]\.){2,}|[A-Za-z][\w-]*(?:['\u2019]s\b)?|\S")  # "U.S." one token
_RELATIVE = ("that", "which", "who", "whom", "whose")  # a relative clause follows the head
OWNS = re.compile(r"['\u2019]s$")  # a possessive's "'s" (or "\u2019s") ending a word
# adverbs and participles end the phrase before them: "really", "recently", "invented", "located",
# "available"; the closed lists, "still", "together", "born", "made"
_NOT_A_HEAD = re.compile(r"(?:\w{2}ly|\w{2}[^e]ed)$", re.IGNORECASE)
_ENDS_A_PHRASE = frozenset(
    "still even ever already yet now today together back away instead else available born made built known "
    "given taken held found seen shown sold paid sent spent written brought bought caught taught".split()
)
MAX_PHRASE_WORDS = 8
_SENTENCE_START = re.compile(r"[.?!;:]\s")


def _verb_follows(before: str) -> bool:
    """Whether the noun phrase after ``before`` (the text up to its first word, determiner included) is
    the subject of an inverted question, so that its last word may be the verb or the predicate: "When
    did [the show air]?", "How does the liquidity of [this index fund compare]?", "Is [the vaccine
    safe]?", "When was [the player born]?". Not "Can I visit [the law library]?" (the subject is "I"),
    nor "What is [the filing fee]?" (the phrase completes the copula)."""
    sentence = _SENTENCE_START.split(before)[-1]
    said = re.findall(r"[a-z]+", sentence.lower())
    at = max((i for i, w in enumerate(said) if w in _AUXILIARIES), default=None)
    if at is None:
        return False
    after = said[at + 1 :]
    # the subject starts right after the auxiliary: "the", "the oldest", "the liquidity of this"; not
    # "is this the" ("this" is the subject)
    determiners = sum(w in _DETERMINERS for w in after)
    starts_there = bool(after) and after[0] in _DETERMINERS and (determiners == 1 or "of" in after)
    if said[at] in _COPULA:  # a yes/no question, or "when/where/why/how was": a predicate may follow
        return starts_there and (at == 0 or said[at - 1] in _ASKING_HOW)
    return starts_there


def noun_phrase(question: str, start: int) -> list[str]:
    """The words of the noun phrase that starts at ``start`` (its first word after the determiner), as
    the user wrote them, the head last: "TV sitcom on ABC" -> ["TV", "sitcom"]; "police department's
    Explorer program" -> ["police", "department's"] (a possessive ends the phrase). It ends at a stopword,
    a preposition or punctuation; a last word that reads as an adverb or participle ("recently",
    "invented") is dropped, and so is the verb or predicate after the subject of an inverted question
    ("When did the show air?" -> ["show"]). [] when no word starts there."""
    tokens = [m.group() for m in _PHRASE_TOKEN.finditer(question, start)]
    run: list[str] = []
    ended_by = ""
    for token in tokens:
        lower = token.lower()
        if not token[0].isalpha() or lower in STOPWORDS or lower in _PREPOSITIONS or lower in _ENDS_A_PHRASE:
            ended_by = lower
            break
        run.append(token)
        if OWNS.search(token):
            ended_by = "'s"
            break
        if len(run) == MAX_PHRASE_WORDS:
            break
    if (
        len(run) > 1
        and ended_by not in ("of", "'s", *_RELATIVE)  # "the state that ..." keeps its head
        and ended_by not in _VERB_STOPWORDS | _ENDS_A_PHRASE  # the verb or predicate is that word
        and _verb_follows(question[:start])
    ):
        run.pop()
    while len(run) > 1 and _NOT_A_HEAD.search(run[-1]):
        run.pop()
    return run


def _phrase_start(question: str, noun: str) -> int | None:
    """Where the first phrase whose first word is ``noun`` starts (after a determiner, or after a
    ranking word after one: "the oldest trophy"), or None."""
    found = re.search(
        rf"\b(?:{'|'.join(_DETERMINERS)}|specific)\s+(?:\w+\s+)?({re.escape(noun)})\b", question, re.I
    )
    return found.start(1) if found else None


def user_noun(question: str, noun: str) -> str:
    """The head of the user's noun phrase that begins with ``noun`` (a word a signal found right after a
    determiner), as the user wrote it: "tv" in "this TV sitcom" -> "sitcom", "particular" in "this
    particular index fund" -> "fund", "county" -> "county". The possessive's "'s" is dropped ("the
    hurricane's" -> "hurricane"). ``noun`` as the question spells it when the phrase is not found."""
    start = _phrase_start(question, noun)
    phrase = noun_phrase(question, start) if start is not None else []
    head = phrase[-1] if phrase else as_written(question, noun)
    return OWNS.sub("", head)


def as_written(question: str, word: str) -> str:
    """``word`` as the question spells it ("sdk" -> "SDK"), or as given when the question lacks it."""
    found = re.search(rf"\b{re.escape(word)}\b", question, re.IGNORECASE)
    return found.group(0) if found else word


def modifier_use(question: str, noun: str) -> bool:
    """Whether the question uses ``noun`` only to qualify a plural noun after it ("the key aspects",
    "the main factors"): no kind of ``noun`` is then a reading of the question. A singular word after it
    may be its verb ("did the gin increase production") or a compound a kind still narrows ("the support
    conviction": child or partner support), so only a plural counts."""
    found = re.search(rf"\b{re.escape(noun)}\s+([A-Za-z][\w-]*)", question, re.IGNORECASE)
    after = found.group(1).lower() if found else ""
    if after in STOPWORDS or after in _PREPOSITIONS:
        return False
    return len(after) > 3 and after.endswith("s") and not after.endswith(("ss", "us", "is"))


# The lowest cosine (all-MiniLM-L6-v2, the default embedder) between an option alone and the user's
# question for the option to be named. Chosen on the MTRAG-UN tuning slice (``python -m
# research.clarify_options --data $MTRAG_DATA``, 36 s with the model's load): the 82 options that the
# slice's 18 UNDERSPECIFIED turns offering two get from their own passages and conversations, against the
# same options beside the other conversations' underspecified questions (1,394); the highest threshold
# that keeps 90% of the own options: 90.2% kept (16 of 18 sets still offer two), 4.8% of the foreign
# ones (AUC 0.979; the option in its passage sentence 0.978, the question after the last user turn
# 0.962). 0.2 keeps 96.3% and 18 of 18 sets at 7.1% foreign: the higher one is kept, as a plain
# question ("Which chain do you mean?") is never wrong and an option about something else is.
# benchmarks/results/clarify.md
OPTION_MIN_SIMILARITY = 0.25
# a word run together with the next by text extraction ("DepartmentsHow Do", "HealthVeterans"): no name
# to offer; 5 lower-case letters before the capital keep "LeBron", "JavaScript", "SharePoint"
_RUN_TOGETHER = re.compile(r"[a-z]{5}[A-Z][a-z]")


def option_similarities(options: Sequence[str], question: str, embed: Embed) -> list[float]:
    """Each option's cosine with the user's question (one embedding call)."""
    if not options:
        return []
    vectors = embed([question, *options])
    return [float(x) for x in vectors[1:] @ vectors[0]]


def sensible_options(
    options: Sequence[str], question: str, embed: Embed, threshold: float | None = None
) -> list[str]:
    """The options about what the user asked, in order: readable (no words run together) and with a
    cosine with the user's question of at least ``threshold`` (``OPTION_MIN_SIMILARITY``)."""
    least = OPTION_MIN_SIMILARITY if threshold is None else threshold
    readable = [option for option in options if not _RUN_TOGETHER.search(option)]
    similarities = option_similarities(readable, question, embed)
    return [option for option, similarity in zip(readable, similarities, strict=True) if similarity >= least]


_POINTING_DETERMINER = re.compile(r"\b(?:the|this|these|those)\s+", re.IGNORECASE)
MIN_KIND_LETTERS = 3


def phrase_heads(question: str) -> list[str]:
    """The heads of the question's noun phrases after "the/this/these/those", as written, in order, each
    once: "the story of this novel" -> ["story", "novel"]; past a possessive, the phrase it opens ("the
    animal's breed" -> "breed", "the Grey's Anatomy season" -> "season"). Not a head that is not a word
    of at least ``MIN_KIND_LETTERS`` letters ("the U.S." -> "U")."""
    heads = []
    for match in _POINTING_DETERMINER.finditer(question):
        phrase = noun_phrase(question, match.end())
        if phrase and OWNS.search(phrase[-1]):
            owner = re.search(re.escape(phrase[-1]), question[match.end() :])
            owned = noun_phrase(question, match.end() + owner.end()) if owner else []
            phrase = owned or phrase
        head = OWNS.sub("", phrase[-1]) if phrase else ""
        if len(head) >= MIN_KIND_LETTERS and head.isalpha() and head.lower() not in STOPWORDS:
            heads.append(head)
    return list(dict.fromkeys(heads))


def kind_of_options(question: str, options: Sequence[str], embed: Embed) -> str | None:
    """Which of the user's nouns (``phrase_heads``) the options are of: the head whose mean cosine with
    the options is highest ("the story of this novel" over "The Tell-Tale Heart", "The Long Walk", ...
    -> "novel"), so that a question without a kind from the signals still names the user's word ("Which
    novel do you mean: ...?", not "Which one"). None when the question has no such noun (one embedding
    call when it has two or more)."""
    heads = phrase_heads(question)
    if len(heads) <= 1:
        return heads[0] if heads else None
    vectors = embed([*heads, *options])
    means = (vectors[: len(heads)] @ vectors[len(heads) :].T).mean(axis=1)
    return heads[int(np.argmax(means))]
