"""How likely the answering model is to decline: the share of its samples that would say "I don't know".

A model that makes an answer up from on-topic passages is unsure of it: sampled a few times, some of its
samples decline, while an answer the passages hold is written the same way every time (issue 47's probe:
of four invented answers, three had "I don't know" among five samples at temperature 0.8; none of 24
right answers had any; semantic entropy, Farquhar et al., Nature 2024). Sampling costs a reply per
sample. The share of samples that open with a decline is, in expectation, the probability mass the model
puts on a decline's first token, which one call gives exactly: the answer prompt that offers the "I don't
know" way out, and the distribution over its first reply token (``logprobs``, one token generated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage

from mtrag_graph.judging.grounding import (
    LIST_NUMBER,
    claim_text,
    facts_in,
    numbers_in,
    technical_tokens,
    verbatim_key,
    verbatim_pattern,
)
from mtrag_graph.models.calls import invoke_text
from mtrag_graph.models.capabilities import capabilities_of
from mtrag_graph.text import declines, sentences

# first tokens that open a decline ("I don't know ...", "I'm sorry ...", "Sorry, ...", "Unfortunately ...");
# an answer from documentation rarely opens with the bare pronoun ("If", "In", "It" are other tokens)
DECLINE_STARTS = frozenset({"i", "sorry", "unfortunately", "i'm"})
TOP_LOGPROBS = 20


def first_token_mass(logprobs: Any, starts: frozenset[str] = DECLINE_STARTS) -> float | None:
    """The probability of the reply's first token being one of ``starts`` (OpenAI logprobs format)."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    first = content[0]
    alternatives = first.get("top_logprobs") or [first]
    return sum(
        math.exp(float(a["logprob"]))
        for a in alternatives
        if str(a.get("token", "")).strip().strip("\"'`*,").lower() in starts
    )


def decline_probability(model: BaseChatModel, messages: Sequence[BaseMessage]) -> float | None:
    """The model's probability of opening its reply to ``messages`` with a decline; None when the
    backend gives no log-probabilities (then nothing is decided on it)."""
    if not capabilities_of(model).logprobs:
        return None
    reply = invoke_text(model, messages, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
    mass = first_token_mass((reply.response_metadata or {}).get("logprobs"))
    return None if mass is None else round(min(mass, 1.0), 6)


# ---- samples: does the model write the same facts again? --------------------------------------------


def key_facts(text: str) -> set[str]:
    """What two answers must share to say the same thing: numbers, technical tokens (an option also by
    its name: "--encryption=MODE" is "--encryption" too) and names."""
    return _facts_and_commands(text)[0]


def _facts_and_commands(text: str) -> tuple[set[str], set[str]]:
    """``key_facts``, and the first two words of the commands among them ("`borg init --encryption=MODE
    PATH`" -> "borg init"), which a short sample may name alone."""
    found: set[str] = set()
    prefixes: set[str] = set()
    for sentence in sentences(text):
        sentence = claim_text(sentence)  # "[Document 2]", "in Document 2": no fact of the answer's
        if LIST_NUMBER.fullmatch(sentence):  # "1." split off a numbered list item
            continue
        numbers, names = facts_in(sentence)
        found |= numbers | names
        for token in technical_tokens(sentence):
            found.add(verbatim_key(token))
            found.update(verbatim_key(t).split("=")[0] for t in technical_tokens(token) if t != token)
            words_of = token.split()
            if len(words_of) > 2:
                prefixes.add(verbatim_key(" ".join(words_of[:2])))
    return found, prefixes


def holds_fact(text: str, fact: str) -> bool:
    """Does ``text`` hold ``fact`` (a ``key_facts`` entry: a number, a name's word, a technical token) as a
    whole word?"""
    if fact in numbers_in(text):
        return True
    return verbatim_pattern(fact).search(verbatim_key(text)) is not None


def sample_disagreements(answer: str, samples: Sequence[str], question: str = "") -> list[str]:
    """Why each disagreeing sample disagrees with ``answer``: it declines, or it names facts of its own
    and none of the facts the answer adds to the question ("6 daily archives" against "7"); naming only
    the answer's command ("`borg init`") agrees when every fact the sample names is the answer's. A sample
    that names no fact of its own (cut before it, or in other words) says nothing either way."""
    asked = key_facts(question)
    facts, commands = _facts_and_commands(answer)
    facts, commands = facts - asked, commands - asked
    reasons = []
    for sample in samples:
        if declines(sample):
            reasons.append("declined")
            continue
        own = key_facts(sample) - asked
        if not facts or not own or any(holds_fact(sample, fact) for fact in facts):
            continue
        if any(holds_fact(sample, command) for command in commands) and own <= facts | commands:
            continue
        reasons.append("names none of: " + ", ".join(sorted(facts)[:5]))
    return reasons


def draw_samples(
    model: BaseChatModel, messages: Sequence[BaseMessage], count: int, temperature: float, max_tokens: int
) -> list[str]:
    """``count`` replies to ``messages`` sampled at ``temperature`` (the prompt's prefix is cached: each
    costs its own tokens)."""
    return [
        str(invoke_text(model, messages, max_tokens=max_tokens, temperature=temperature).content).strip()
        for _ in range(count)
    ]
