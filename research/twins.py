"""Underspecified twins: clarify tuning data made from the tuning split, which has no UNDERSPECIFIED turn.

From a tuning-split turn whose answer depends on a named entity (a capitalised name in the user's
turn that the turn's reference passages also hold), two items:

- the **underspecified twin**: the name replaced by a bare reference ("this clinic", "the park",
  "it"), and the conversation that named it removed (the turn becomes a first turn) or changed (the
  last exchange of another conversation of the same domain that never names it);
- the **answerable twin**: the original turn and conversation, unchanged.

Both twins get the same passages: the turn's own, plus (when there is one) the passages of a turn of
another conversation of the same domain whose named entity shares the reference word ("Hibbing VA
Clinic" for "Causeway VA Clinic"), as MTRAG-UN's underspecified turns come with passages about several
things of that kind. The twins then differ only in whether the user says which thing is meant.

The reference word is a word of the name that the passages also use in lower case ("clinic" in
"Causeway VA Clinic", "hurricane" in "Hurricane Katrina"): no list of topic nouns. A name with no such
word becomes "it". Everything random is drawn from one seeded generator, so a seed and the input file
give the same set (``build_twins``, ``mtrag-graph clarify-twins``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.models import invoke_text
from mtrag_graph.tasks import answerability_of, domain_of
from mtrag_graph.text import STOPWORDS
from research import twin_prompts as prompts

ANSWERED = ("ANSWERABLE", "PARTIAL")
# A capitalised name of one to five words ("Causeway VA Clinic", "Hurricane Katrina", "Bank of America").
_NAME = re.compile(r"\b([A-Z][\w'&.-]*[\w]|[A-Z])((?:\s+(?:of\s+(?:the\s+)?)?[A-Z][\w'&.-]*[\w])*)")
_SENTENCE_START = re.compile(r"(^|[.?!:]\s+|\n)\s*$")
_WORD = re.compile(r"[a-z]+")
MIN_NAME_CHARS = 4


def _names(question: str) -> list[str]:
    """Capitalised names of the question, leaving out a lone word that starts a sentence ("What", "Is")."""
    names = []
    for match in _NAME.finditer(question):
        name = (match.group(1) + match.group(2)).strip()
        words = name.split()
        at_start = bool(_SENTENCE_START.search(question[: match.start()]))
        if at_start and words[0].lower() in STOPWORDS:
            words = words[1:]  # "Does Causeway VA Clinic" -> "Causeway VA Clinic"
            name = " ".join(words)
        elif at_start and len(words) == 1:  # a lone capitalised first word ("Tell", "Explain")
            continue
        if re.search(r"\ban?\s*$", question[: match.start()], re.IGNORECASE):  # "an Earth satellite"
            continue
        if not words or len(name) < MIN_NAME_CHARS or words[0].lower() in STOPWORDS:
            continue
        if len(words) == 1 and words[0].isupper():  # a lone acronym ("IBM", "VPC"): often a product name
            continue
        names.append(name)
    return names


def _passage_text(passages: Sequence[dict[str, Any]]) -> str:
    return " ".join(f"{p.get('title') or ''} {p.get('text', '')}" for p in passages)


def reference_word(name: str, passages_text: str) -> str | None:
    """The name's head word when the passages also use it in lower case ("clinic"), else None."""
    lowered = set(_WORD.findall(passages_text))
    head = name.split(" of ")[0].split()[-1]  # the head of an English noun phrase: "Great Wall of China"
    plain = head.strip("'.&-").lower()
    if plain.isalpha() and len(plain) >= 3 and plain not in STOPWORDS and plain in lowered:
        return plain
    return None


def named_entity(raw: dict[str, Any]) -> dict[str, str] | None:
    """The first name of the user's turn that its passages hold, with its reference word, or None."""
    question = raw["input"][-1]["text"]
    passages = raw.get("contexts") or []
    text = _passage_text(passages)
    for name in _names(question):
        if name in text:
            return {"name": name, "kind": reference_word(name, text) or ""}
    return None


def bare_question(question: str, name: str, reference: str) -> str:
    """The question with the name (and an article or possessive around it) replaced by ``reference``."""
    pattern = re.compile(rf"\b(?:[Tt]he\s+)?{re.escape(name)}(?:'s\b)?")

    def replace(match: re.Match[str]) -> str:
        possessive = match.group(0).endswith("'s")
        if reference == "it":
            return "its" if possessive else "it"
        return f"{reference}'s" if possessive else reference

    replaced = pattern.sub(replace, question)
    return replaced[:1].upper() + replaced[1:] if replaced else replaced


def _conversation(raw: dict[str, Any]) -> str:
    return str(raw.get("conversation_id") or raw["task_id"].split("<::>")[0])


def _domain(raw: dict[str, Any]) -> str:
    return domain_of(raw.get("Collection") or raw.get("collection")) or "unknown"


def _mentions(turns: Iterable[dict[str, str]], words: Iterable[str]) -> bool:
    text = " ".join(t["text"].lower() for t in turns)
    return any(w and w.lower() in text for w in words)


def name_sources(tasks: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """The ANSWERABLE/PARTIAL turns with passages whose user turn names an entity they hold."""
    sources = []
    for raw in tasks:
        if answerability_of(raw) not in ANSWERED or not raw.get("contexts"):
            continue
        entity = named_entity(raw)
        if entity is not None:
            sources.append((raw, entity))
    return sources


def build_twins(
    tasks: Sequence[dict[str, Any]], *, seed: int = 0, kinds: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Underspecified and answerable twins (task format, with ``twin`` fields), in input order: the
    name twins, then the reference twins, then (with ``kinds``, name -> common noun: ``model_kinds``)
    the kind twins."""
    rng = random.Random(seed)
    sources = name_sources(tasks)
    by_domain_kind: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, str]]]] = defaultdict(list)
    by_domain: dict[str, list[tuple[dict[str, Any], dict[str, str]]]] = defaultdict(list)
    for raw, entity in sources:
        by_domain[_domain(raw)].append((raw, entity))
        if entity["kind"]:
            by_domain_kind[(_domain(raw), entity["kind"])].append((raw, entity))
    exchanges: dict[str, list[tuple[str, list[dict[str, str]]]]] = defaultdict(list)
    for raw in tasks:
        if len(raw["input"]) >= 3:
            exchanges[_domain(raw)].append((_conversation(raw), raw["input"][-3:-1]))

    twins: list[dict[str, Any]] = []
    for raw, entity in sources:
        name, kind = entity["name"], entity["kind"]
        domain = _domain(raw)
        reference = f"{rng.choice(['this', 'the'])} {kind}" if kind else "it"
        question = raw["input"][-1]["text"]
        # passages of several things of that kind: this turn's and another same-kind name's
        others = [
            (r, e)
            for r, e in by_domain_kind.get((domain, kind), [])
            if e["name"] != name and _conversation(r) != _conversation(raw)
        ]
        if not others:  # no other name of that kind: another named thing of the same domain
            others = [
                (r, e)
                for r, e in by_domain[domain]
                if e["name"] != name and _conversation(r) != _conversation(raw)
            ]
        passages, other_name = _with_other(raw, others, rng)
        history, history_change = _history_without(raw, exchanges[domain], [name, kind], rng)
        twin_fields = {
            "name": name,
            "kind": kind,
            "other_name": other_name,
            "source": raw["task_id"],
            "form": "name",
        }
        twins += _pair(
            raw,
            "",
            passages,
            twin_fields,
            [*history, {"speaker": "user", "text": bare_question(question, name, reference)}],
            reference=reference,
            history=history_change,
        )
    twins += reference_twins(tasks, exchanges, seed=seed)
    if kinds:
        twins += kind_twins(sources, exchanges, kinds, seed=seed)
    return twins


_KIND_REPLY = re.compile(r"(?:an?\s+|the\s+)?([a-z]{3,20})")


def parse_kind(reply: str, name: str) -> str | None:
    """One common noun, or None: a single lower-case word (an article allowed), not a closed-class word
    and not a word of the name ("Snake River" -> "river" tells nothing the name does not)."""
    text = reply.strip().strip(".\"'`*").strip().lower()
    match = _KIND_REPLY.fullmatch(text)
    if match is None:
        return None
    noun = match.group(1)
    if noun in STOPWORDS or noun in {w.lower() for w in _WORD.findall(name.lower())}:
        return None
    return noun


KIND_SNIPPET_CHARS = 240  # the passage around the name's first mention, each side


def kind_messages(name: str, passage: str) -> list[BaseMessage]:
    """Ask for the common noun of a name's kind ("country" for Israel), shown where the passage names it."""
    at = max(passage.find(name), 0)
    snippet = " ".join(passage[max(at - KIND_SNIPPET_CHARS, 0) : at + len(name) + KIND_SNIPPET_CHARS].split())
    return [SystemMessage(prompts.KIND_SYSTEM), HumanMessage(prompts.KIND.format(passage=snippet, name=name))]


def model_kinds(tasks: Sequence[dict[str, Any]], model: BaseChatModel, *, retries: int = 1) -> dict[str, str]:
    """name -> the model's common noun for it ("Israel" -> "country"), for the names of the name
    twins' sources, asked where a passage names it; a reply that is not one noun is asked again
    (``retries`` times), then the name is left out."""
    kinds: dict[str, str] = {}
    for raw, entity in name_sources(tasks):
        name = entity["name"]
        if name in kinds:
            continue
        passage = next(str(p.get("text", "")) for p in raw["contexts"] if name in _passage_text([p]))
        messages = kind_messages(name, passage)
        for _ in range(retries + 1):
            reply = str(invoke_text(model, messages, max_tokens=6).content)
            noun = parse_kind(reply, name)
            if noun is not None:
                kinds[name] = noun
                break
            messages = [
                *messages,
                AIMessage(content=reply),
                HumanMessage(content="Reply with one noun only."),
            ]
    return kinds


def kind_twins(
    sources: Sequence[tuple[dict[str, Any], dict[str, str]]],
    exchanges: dict[str, list[tuple[str, list[dict[str, str]]]]],
    kinds: Mapping[str, str],
    *,
    seed: int,
) -> list[dict[str, Any]]:
    """Twins that refer to the thing by its kind ("What is the Jewish population in the country?"):
    the name replaced by "the <kind>", the conversation removed or replaced by another same-domain
    conversation's last exchange that names neither the name nor the kind; passages: the turn's own
    and those of another named turn of the domain, preferably of the same kind. Their own seeded
    generator, so the name and reference twins stay as they were."""
    rng = random.Random(f"kind-{seed}")
    usable = [(raw, entity, kinds[entity["name"]]) for raw, entity in sources if entity["name"] in kinds]
    twins: list[dict[str, Any]] = []
    for raw, entity, kind in usable:
        name, domain = entity["name"], _domain(raw)
        others = [
            (r, e)
            for r, e, k in usable
            if _domain(r) == domain and e["name"] != name and _conversation(r) != _conversation(raw)
        ]
        alike = [(r, e) for r, e in others if kinds[e["name"]] == kind]
        passages, other_name = _with_other(raw, alike or others, rng)
        history, history_change = _history_without(raw, exchanges[domain], [name, kind], rng)
        reference = f"the {kind}"
        question = bare_question(raw["input"][-1]["text"], name, reference)
        fields = {
            "name": name,
            "kind": kind,
            "other_name": other_name,
            "source": raw["task_id"],
            "form": "kind",
        }
        twins += _pair(
            raw,
            "-kind",
            passages,
            fields,
            [*history, {"speaker": "user", "text": question}],
            reference=reference,
            history=history_change,
        )
    return twins


# The twin labels' own patterns, not the clarify node's (the same today): tuning the detector must
# not move the data it is tuned on.
_PRONOUN = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her)\b", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+")
_GENDERS = (frozenset({"she", "her", "hers", "herself"}), frozenset({"he", "him", "his", "himself"}))


def refers_back(question: str) -> str | None:
    """The pronoun of a later turn that points back into the conversation ("does he have an infinity
    gem", "How much dividend does it pay?"): the first one, when no name comes before it in the turn."""
    pronoun = _PRONOUN.search(question)
    if pronoun is None or _NAME_BEFORE.search(question[: pronoun.start()]):
        return None
    return pronoun.group(1).lower()


def _title_words(passages: Sequence[dict[str, Any]]) -> set[str]:
    return {
        w for p in passages for w in _WORD.findall(str(p.get("title") or "").lower()) if w not in STOPWORDS
    }


def reference_twins(
    tasks: Sequence[dict[str, Any]],
    exchanges: dict[str, list[tuple[str, list[dict[str, str]]]]],
    *,
    seed: int,
) -> list[dict[str, Any]]:
    """Twins of later turns whose pronoun the conversation resolves ("does he have an infinity gem"
    after an exchange about Thor): the question kept word for word, the conversation replaced by the
    last exchange of another same-domain conversation that names none of the turn's passage titles'
    words and, for "he"/"she", has no pronoun of that gender. Passages: the turn's own and another such
    turn's of the domain. Drawn from their own seeded generator, so adding them leaves the name twins
    as they were."""
    rng = random.Random(f"reference-{seed}")
    sources = [
        (raw, pronoun)
        for raw in tasks
        if answerability_of(raw) in ANSWERED
        and raw.get("contexts")
        and len(raw["input"]) >= 3
        and (pronoun := refers_back(raw["input"][-1]["text"]))
    ]
    twins: list[dict[str, Any]] = []
    for raw, pronoun in sources:
        domain = _domain(raw)
        others = [r for r, _ in sources if _domain(r) == domain and _conversation(r) != _conversation(raw)]
        passages = list(raw["contexts"])
        if others:
            passages += rng.choice(others)["contexts"]
        titles = _title_words(passages)
        gender = next((g for g in _GENDERS if pronoun in g), frozenset())
        candidates = [
            turns
            for conversation, turns in exchanges[domain]
            if conversation != _conversation(raw)
            and not any(w in titles or w in gender for t in turns for w in _WORD.findall(t["text"].lower()))
        ]
        if not candidates:
            continue
        history = [dict(t) for t in rng.choice(candidates)]
        fields = {"name": "", "kind": "", "other_name": "", "source": raw["task_id"], "form": "reference"}
        twins += _pair(
            raw,
            "-reference",
            passages,
            fields,
            [*history, raw["input"][-1]],
            reference=pronoun,
            history="changed",
        )
    return twins


def _with_other(
    raw: dict[str, Any], others: Sequence[tuple[dict[str, Any], dict[str, str]]], rng: random.Random
) -> tuple[list[dict[str, Any]], str]:
    """The turn's passages plus those of one of ``others`` (drawn), and that one's name ("" if none)."""
    passages = list(raw["contexts"])
    if not others:
        return passages, ""
    other, other_entity = rng.choice(others)
    return passages + list(other["contexts"]), other_entity["name"]


def _history_without(
    raw: dict[str, Any],
    exchanges: Sequence[tuple[str, list[dict[str, str]]]],
    words: Sequence[str],
    rng: random.Random,
) -> tuple[list[dict[str, str]], str]:
    """The conversation that named it removed, or (drawn, half the time) replaced by the last exchange
    of another conversation that says none of ``words``: (turns, "removed" or "changed")."""
    candidates = [
        turns
        for conversation, turns in exchanges
        if conversation != _conversation(raw) and not _mentions(turns, words)
    ]
    if not candidates or rng.random() < 0.5:
        return [], "removed"
    return [dict(t) for t in rng.choice(candidates)], "changed"


def _pair(
    raw: dict[str, Any],
    suffix: str,
    passages: list[dict[str, Any]],
    fields: dict[str, Any],
    turns: list[dict[str, str]],
    *,
    reference: str,
    history: str,
) -> list[dict[str, Any]]:
    """The answerable twin (the turn as it was) and the underspecified one (``turns``), ids marked
    ``twin-answerable{suffix}:`` / ``twin-underspecified{suffix}:``; both get ``passages``."""
    common = {"Collection": raw.get("Collection"), "contexts": passages, "targets": raw.get("targets", [])}
    return [
        {
            "task_id": f"twin-answerable{suffix}:{raw['task_id']}",
            "conversation_id": f"twin-answerable{suffix}:{_conversation(raw)}",
            **common,
            "input": raw["input"],
            "answerability": ["ANSWERABLE"],
            "twin": {**fields, "role": "answerable"},
        },
        {
            "task_id": f"twin-underspecified{suffix}:{raw['task_id']}",
            "conversation_id": f"twin-underspecified{suffix}:{_conversation(raw)}",
            **common,
            "input": turns,
            "answerability": ["UNDERSPECIFIED"],
            "twin": {**fields, "role": "underspecified", "reference": reference, "history": history},
        },
    ]


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
