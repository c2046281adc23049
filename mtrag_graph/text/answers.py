"""Answer text rules: cleaning model output and spotting bad answers (refusals: ``mtrag_graph.text``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from mtrag_graph.text import STOPWORDS, content_stems, declines, sentence_spans, sentences, stem, words

_CHAT_MARKERS = re.compile(r"<\|[^|>]*\|>|</?s>|\[/?INST\]")
_ROLE_PREFIX = re.compile(r"^\s*(assistant|agent|answer|response|ai)\s*(:|\n)\s*", re.IGNORECASE)
_SOURCE_PREFIX = re.compile(
    r"^\s*(based on|according to|from) (the )?(information |text |details )?(provided |given )?"
    r"(in |from )?(the )?(documents?|passages?|text|context)( provided| given| above)?\s*,\s*",
    re.IGNORECASE,
)
_ECHO_START = re.compile(r"^\s*(documents?|conversation so far|question)\s*:", re.IGNORECASE)
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred thousand million billion "
    "several few many dozen single both none no"
).split()
_INJECTION_CUE = re.compile(
    r"(ignore|disregard|forget) (all |any )?(the )?(previous|prior|above|earlier|your) (instructions|rules|prompts?)"
    r"|you are now|new instructions?:|system prompt",
    re.IGNORECASE,
)
_PAYLOAD = re.compile(
    r"[\"'“‘]([^\"'”’]{3,200})[\"'”’]|\b(?:answer|say|reply|respond|output|write)(?: with| only| exactly)*[: ]+(.{3,200})",
    re.IGNORECASE,
)
_CITATION = re.compile(r"\s*\[(?:Passage|Document)s?\s*\d+(?:\s*(?:,|and)\s*\d+)*\]", re.IGNORECASE)
RESTATEMENT_OVERLAP = 0.8  # share of the answer's words taken from the question: it restates the question
RESTATEMENT_EXTRA_WORDS = 3  # ... when it is at most this many words longer than the question
INJECTION_SPAN_CHARS = 300  # text after an injection cue searched for what it asks the model to say
INJECTION_OVERLAP = 0.8  # share of the answer's words found in an injected payload: it repeats it


def clean_answer(text: str) -> str:
    """Strip chat markers, a role prefix and an "According to the documents," opener."""
    text = _CHAT_MARKERS.sub("", text)
    text = _ROLE_PREFIX.sub("", text.strip())
    stripped = _SOURCE_PREFIX.sub("", text)
    if stripped != text and stripped:
        text = stripped[0].upper() + stripped[1:]
    return text.strip()


# the auxiliary verbs a yes/no question opens with ("Is ...", "Does ...", "Can ...")
YES_NO_OPENERS = (
    "is", "are", "was", "were", "am", "can", "could", "do", "does", "did", "will", "would", "should",
    "shall", "has", "have", "had", "may", "might", "must",
)  # fmt: skip
_YES_NO_QUESTION = re.compile(rf"^\W*({'|'.join(YES_NO_OPENERS)})\b", re.IGNORECASE)
_LEADING_YES_NO = re.compile(r"^(yes|no)\s*[,.!:;]\s*(?=\S)", re.IGNORECASE)
_QUESTION_END = re.compile(r"(?<=\?)\s+")
_WH_QUESTION = re.compile(r"^\W*(?:what|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)


# A request put as a question to the assistant ("can you please tell me more about Letitia James?",
# "Could tell me the difference between index fund and mutual funds?"): it asks for information, not for
# yes or no. On MTRAG-UN dev such turns were answered with a quoted sentence as if they were yes/no.
_REQUEST = re.compile(
    r"^\W*(can|could|would|will)\s+(you\s+)?(please\s+|kindly\s+|also\s+|just\s+)*"
    r"(tell|give|provide|explain|describe|list|share|show|help|summari[sz]e|elaborate|define|name|recommend|"
    r"suggest|outline|compare|clarify|walk|let\s+me\s+know|inform|detail|expand|go\s+over|point\s+me)\b",
    re.IGNORECASE,
)


def is_yes_no_question(question: str) -> bool:
    """Does ``question`` open like a yes/no question ("Is ...", "Does ...", "Can ...")? A request to the
    assistant ("Can you tell me more about ...?", "Could you explain ...?") is not one."""
    return _YES_NO_QUESTION.match(question) is not None and _REQUEST.match(question) is None


def drop_spurious_yes_no(answer: str, question: str) -> str:
    """Remove a "Yes, " / "No, " opener from an answer to a wh-question ("What ...?", "How ...?").

    Prompts that tell a small model to start yes/no answers with "Yes" or "No" make it open every
    answer that way ("No, Watson Assistant is a service ..." to "What is Watson Assistant?"). Any other
    question keeps its answer's yes or no: people answer "Michael Jordan earns $X a year?" with "Yes,
    that's correct. ..." and "Can you tell me more about X?" with "Yes, ..." (MTRAG-UN reference answers),
    and a wh-question followed by a yes/no one ("What about HIV pandemic? did it kill many people?") with
    "Yes, ..." (the two people's answers this rule took among MTRAG's 777 and the tuning slice's 36).
    """
    if not _WH_QUESTION.match(question):
        return answer
    if _YES_NO_QUESTION.match(question.partition(",")[2].strip()):
        return answer  # "When I export my tabs, do encrypted tabs stay encrypted?": a yes/no main clause
    if any(_YES_NO_QUESTION.match(part) for part in _QUESTION_END.split(question.strip())[1:]):
        return answer  # "What about pricing? Is there a free trial period to start?": a yes/no question too
    stripped = _LEADING_YES_NO.sub("", answer, count=1)
    return stripped[0].upper() + stripped[1:] if stripped and stripped != answer else answer


def strip_citations(text: str) -> str:
    """The answer without ``[Passage N]`` / ``[Document N]`` markers."""
    return _CITATION.sub("", text).strip()


def injected_payloads(passages: list[str]) -> list[str]:
    """What passages that try to instruct the model ask it to say (quoted text, or what follows "answer")."""
    payloads = []
    for passage in passages:
        for cue in _INJECTION_CUE.finditer(passage):
            span = passage[cue.start() : cue.start() + INJECTION_SPAN_CHARS]
            payloads.append(span)
            payloads.extend(next(g for g in m.groups() if g) for m in _PAYLOAD.finditer(span))
    return [p for p in payloads if words(p)]


def repeats_injection(answer: str, payloads: list[str]) -> bool:
    """Is the answer (mostly) text that a passage tried to make the model say?"""
    answer_words = words(answer)
    if not answer_words:
        return False
    joined = " ".join(answer_words)
    for payload in payloads:
        payload_words = words(payload)
        if payload_words and " ".join(payload_words) in joined:
            return True
        if len(set(answer_words) & set(payload_words)) >= INJECTION_OVERLAP * len(set(answer_words)):
            return True
    return False


def trim_to_sentence(text: str) -> str | None:
    """Cut an answer that stopped mid-sentence back to its last complete sentence, if it has one."""
    cut = max(text.rfind(". "), text.rfind("! "), text.rfind("? "), text.rfind(".\n"))
    return text[: cut + 1].strip() if cut > 0 else None


REPEATS_PREVIOUS = "repeats the previous answer instead of answering this question"
REPEAT_OVERLAP = 0.8  # share of the answer's content stems (and of the earlier answer's) shared: a repeat


def repeats_answer(answer: str, previous: str) -> bool:
    """Is ``answer`` the earlier agent turn again (a follow-up answered with the answer before it)?"""
    mine, theirs = set(content_stems(answer)), set(content_stems(previous))
    if not mine or not theirs:
        return False
    shared = len(mine & theirs)
    return shared >= REPEAT_OVERLAP * len(mine) and shared >= REPEAT_OVERLAP * len(theirs)


ECHOES_INSTRUCTION = "copies the answering instructions instead of answering"
ECHO_RUN_WORDS = 6  # this many words in a row taken from an instruction: the prompt, not an answer
_PLACEHOLDER = re.compile(r"\{[a-z_]*\}")


def echoes_instruction(answer: str, instructions: Sequence[str], sources: Sequence[str] = ()) -> bool:
    """Does ``answer`` copy ``ECHO_RUN_WORDS`` words in a row of one of the prompt's ``instructions``
    ("The specific facts from the documents above which answer the question ...", the retry's own words
    given back)? A run that ``sources`` (the passages, the question) also hold does not count: the model
    may quote those. Placeholders ("{question}") split an instruction: no run crosses them. The sources
    are read only when the answer shares a run with an instruction (the check runs on every draft the
    stream releases)."""
    said = words(answer)
    if len(said) < ECHO_RUN_WORDS:
        return False
    shared = _runs(said) & _instruction_runs(tuple(instructions))
    if not shared:
        return False
    held = set().union(*(_runs(words(text)) for text in sources)) if sources else set()
    return bool(shared - held)


@lru_cache(maxsize=8)
def _instruction_runs(instructions: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    return frozenset(
        run
        for instruction in instructions
        for piece in _PLACEHOLDER.split(instruction)
        for run in _runs(words(piece))
    )


def _runs(tokens: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + ECHO_RUN_WORDS]) for i in range(len(tokens) - ECHO_RUN_WORDS + 1)}


RESTATES = "restates the question"


def answer_problems(
    answer: str, question: str, truncated: bool, previous_answer: str = "", *, restatement: bool = True
) -> list[str]:
    """Why ``answer`` is a bad answer to ``question`` (empty list: it is acceptable); ``previous_answer``:
    the agent's last turn, which a follow-up's answer must not repeat. ``restatement``: an answer made of
    the question's own words is a problem (the verdict asks it only over retrieved passages)."""
    answer_words = words(answer)
    if not answer_words:
        return ["empty answer"]
    if _ECHO_START.match(answer):
        return ["echoes the prompt"]
    # no length floor: a short answer ("make.", "PROJECT.mat.", "2G.") is what people write to a question
    # about a document (8 of 51 of the real-documents tuning split's reference answers were declined by
    # the "too short" rule, under three words; the bundled writer wrote no such draft there)
    problems = []
    question_words = words(question)
    if restatement and question_words and len(answer_words) <= len(question_words) + RESTATEMENT_EXTRA_WORDS:
        overlap = len(set(answer_words) & set(question_words)) / max(len(set(answer_words)), 1)
        if overlap >= RESTATEMENT_OVERLAP and not adds_values(answer, question):
            problems.append(RESTATES)
    # cut off: the writer ran out of tokens mid-sentence (finish reason "length", nothing to trim back to);
    # a missing full stop alone is no cut (9 of 400 MTRAG reference answers end without one, and each was
    # asked again and then declined)
    if truncated:
        problems.append("cut off mid-sentence")
    if asks_quantity(question) and not states_quantity(answer):
        problems.append(NO_QUANTITY)
    if RESTATES not in problems and lead_restates(answer, question):
        problems.append(LEAD_RESTATES)
    if opens_unnamed(answer, question):
        problems.append(OPENS_UNNAMED)
    if previous_answer and repeats_answer(answer, previous_answer):
        problems.append(REPEATS_PREVIOUS)
    return problems


NO_QUANTITY = "no quantity in an answer to a how-many question"
_ASKS_QUANTITY = re.compile(
    r"\bhow (?:many|much|long|large|big|fast|old|far|often|frequently)\b", re.IGNORECASE
)
# "Document 2", "[3]", "step 4": a place in the prompt or the text, not a quantity
_PLACE_NUMBER = re.compile(
    r"\b(?:documents?|passages?|sources?|sections?|chapters?|pages?|steps?|tables?|figures?)\s+\d+\b|\[\d+\]",
    re.IGNORECASE,
)
_FREQUENCY_WORDS = frozenset(
    "once twice daily weekly monthly yearly annually hourly nightly every each".split()
)


def asks_quantity(question: str) -> bool:
    """Does the question ask how many, how much, how long, how large, how fast, how old, how far, how often?"""
    return bool(_ASKS_QUANTITY.search(question))


def states_quantity(answer: str) -> bool:
    """Does the answer hold a number, a number word ("three", "a few") or a frequency ("daily")? A number
    that names a place ("According to Document 2", "[3]") is none: on the real-documents tuning split
    "How much memory does zstd need ...?" was answered with a command "according to Document 2"."""
    text = _PLACE_NUMBER.sub(" ", answer)
    return bool(re.search(r"\d", text)) or any(
        w in _NUMBER_WORDS or w in _FREQUENCY_WORDS for w in words(text)
    )


OPENS_UNNAMED = "it opens with 'this' or 'that' for something it never names"
_OPENING_DEMONSTRATIVE = re.compile(r"^\W*(?:this|that|these|those)\s+(\w+)", re.IGNORECASE)


def opens_unnamed(answer: str, question: str) -> bool:
    """Does the answer open with "This method ...", "That allows ..." for a thing neither it nor the
    question names? ("How do I get the full help shown after a usage error ...?" -> "This method allows
    you to customize the behavior of the help display ...": the method is never named). Over the recorded
    real-documents and MTRAG-UN dev answers it fires on that one and on "This allows for diversification
    ..." for "Investment Portfolio Setup for beginner"."""
    match = _OPENING_DEMONSTRATIVE.match(answer)
    if not match:
        return False
    word = match.group(1).lower()
    return stem(word) not in {stem(w) for w in words(question)} and word not in ("is", "was", "means")


LEAD_RESTATES = "its first sentence restates the question without answering it"


def lead_restates(answer: str, question: str) -> bool:
    """Does the answer to a wh-question open with a sentence that adds no content word and no number to
    the question ("What encryption does Borg use for the data?" -> "Borg uses encryption for the data.",
    then sentences about something else)? A yes/no question's answer may restate it ("Seller pay 3%?" ->
    "Seller pays 3%."). On the real-documents tuning split it takes that one answer and no other; on the
    MTRAG-UN dev runs of this round (Task B and C, 124 answered turns), none."""
    opening = sentences(answer)
    if not opening or not _WH_QUESTION.match(question) or words(opening[0])[:1] in (["yes"], ["no"]):
        return False  # a yes or no is judged elsewhere (the yes/no quote)
    if opening[0].rstrip().endswith(":") and len(opening) > 1:
        # it introduces what follows ("The two SAP HANA system types listed by SAP are:", then a list)
        return False
    asked = {stem(w) for w in words(question)}
    added = [w for w in words(opening[0]) if w not in STOPWORDS and len(w) > 1 and stem(w) not in asked]
    return not added and not adds_values(opening[0], question)


# what a short answer may add to the question's words and still answer it: a number ("6 monthly
# archives"), a code span or an option ("`-V` and `--version`"), which ``words`` reads as a bare word or
# drops (one letter)
_NUMBER_TOKEN = re.compile(r"\S*\d\S*")
_TOKEN_EDGES = ".,;:!?()[]'\"\u201c\u201d\u2018\u2019"  # "'4ti2'." is the question's 4ti2
_SPELLED_TOKEN = re.compile(r"`([^`\n]{1,200})`|(?<![\w-])(--?[A-Za-z][\w-]*)")


def adds_values(text: str, question: str) -> bool:
    """Does ``text`` hold a number, a code span or an option that ``question`` does not? ("The quick
    start's example backup script keeps 6 monthly archives." to "... how many monthly archives does prune
    keep?"; "The default flags are `-V` and `--version`." to "Which flags does the version option use by
    default?")"""
    numbers = [t.strip(_TOKEN_EDGES) for t in _NUMBER_TOKEN.findall(text)]
    spelled = [(m.group(1) or m.group(2)).strip() for m in _SPELLED_TOKEN.finditer(text)]
    return any(token and token not in question for token in numbers + spelled)


_QUOTE_LINE = re.compile(r"^\s*[-*]?\s*quote\s*\d*\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_ANSWER_PART = re.compile(r"^\s*answer\s*:\s*", re.IGNORECASE | re.MULTILINE)
_QUOTE_MARKS = "\"'“”‘’`"
QUOTE_MATCH = 0.9  # share of a quote's words that must appear, in order, in one passage


def _quote_found(quote: str, passages: list[str]) -> bool:
    """Is the quote (give or take punctuation and a word or two) a span of one of the passages?"""
    wanted = words(quote.strip().strip(_QUOTE_MARKS))
    if not wanted:
        return False
    for passage in passages:
        have = words(passage)
        if " ".join(wanted) in " ".join(have):
            return True
        # the quote's words found in order in the passage (a small model drops or adds a word)
        matched, position = 0, 0
        for word in wanted:
            try:
                position = have.index(word, position) + 1
            except ValueError:
                continue
            matched += 1
        if matched >= QUOTE_MATCH * len(wanted):
            return True
    return False


def parse_evidence_first(reply: str, passages: list[str], idk: str) -> tuple[str, dict]:
    """The answer of an evidence-first reply, and what its quotes were. No quote, a quote that the
    passages do not hold, or no answer part: the reply is taken as a decline (``idk``)."""
    quotes = [m.group(1).strip() for m in _QUOTE_LINE.finditer(reply)]
    parts = _ANSWER_PART.split(reply, maxsplit=1)
    answer = parts[1].strip() if len(parts) == 2 else ""
    missing = [q for q in quotes if not _quote_found(q, passages)]
    evidence = {"quotes": quotes, "quotes_not_found": missing}
    if declines(reply) and not answer:
        return idk, {**evidence, "outcome": "declined"}
    if not quotes or missing or not answer:
        reason = "no quote" if not quotes else "quote not in the passages" if missing else "no answer part"
        return idk, {**evidence, "outcome": f"declined: {reason}"}
    return answer, {**evidence, "outcome": "answered"}


# A sentence about the documents instead of from them: "The documents provide information about the time
# it takes to run ...", "Document 2 discusses compression levels." It names a topic and states nothing; a
# small model writes it when the passages are on topic but do not hold the answer. "The manual states that
# X" is not one: it goes on to state X.
_ABOUT_DOCUMENTS = re.compile(
    r"^\W*(?:the |these |this |both |all )?(?:provided |given |above |available )?"
    r"(?:documents?|passages?|texts?|context|sources?|manual|information(?: provided| given)?|they)"
    r"(?: \d+)?(?: provided| given| above)?(?:,? ?(?:however|also|only)?,?)? "
    r"(?:(?:provide|provides|give|gives|offer|offers|contain|contains|include|includes|present|presents)"
    r" (?:some |general |detailed |more |further )?(?:information|details|an overview|context|background)"
    r"(?: on| about| regarding| related to| of)?"
    r"|(?:describe|describes|discuss|discusses|mention|mentions|cover|covers|talk about|talks about|explain"
    r"|explains|focus on|focuses on|deal with|deals with|refer to|refers to|touch on|touches on|is about"
    r"|are about|relate to|relates to)"
    r"(?! that| how \w+ (?:is|are|can|should|must))\b)",
    re.IGNORECASE,
)


# "The memory required to decompress a file is specified in the documentation.": where, not what
_FOUND_IN_DOCUMENTS = re.compile(
    r"\b(?:is|are|can be)(?: also)? (?:specified|described|explained|mentioned|given|listed|documented|discussed"
    r"|covered|detailed|found|provided|outlined) in (?:the )?(?:provided |given )?(?:documentation|documents?"
    r"|manual|passages?|texts?|sources?)(?: \d+)?\W*$",
    re.IGNORECASE,
)


def about_documents(sentence: str) -> bool:
    """Does the sentence talk about what the documents cover rather than state something from them?"""
    return bool(_ABOUT_DOCUMENTS.match(sentence) or _FOUND_IN_DOCUMENTS.search(sentence))


def drop_about_documents(answer: str) -> str:
    """The answer without its sentences about the documents ('' when it had nothing else)."""
    text = answer
    for start, end in reversed(sentence_spans(answer)):
        if about_documents(answer[start:end]):
            text = text[:start] + text[end:]
    return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip()).strip()


# an answer to an elliptic turn asked again as a whole question speaks of what the turn replaced when it
# holds at least this share of the replaced words (and fewer of the words that replaced them)
ANSWERS_REPLACED_SHARE = 0.5


def answers_replaced(answer: str, replaced: str, by: str) -> bool:
    """Does ``answer``, to an elliptic turn asked again as the previous question with ``by`` in the place of
    ``replaced`` (``text.ellipsis``), answer the previous question instead? It holds at least half of the
    content words only ``replaced`` has and fewer of those only ``by`` has, under half of them. "And to make
    an arrowhead point the other way?" (asked "How do I make an arrowhead point the other way?") was
    answered "To change the size of all arrowheads globally, ...", the turn before's answer again."""
    old = set(content_stems(replaced)) - set(content_stems(by))
    new = set(content_stems(by)) - set(content_stems(replaced))
    if not old or not new:
        return False
    said = set(content_stems(answer))
    old_share, new_share = len(old & said) / len(old), len(new & said) / len(new)
    return old_share >= ANSWERS_REPLACED_SHARE and new_share < min(old_share, ANSWERS_REPLACED_SHARE)
