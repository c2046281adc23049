"""Elliptic follow-ups asked again as the previous question (``mtrag_graph.text.ellipsis``)."""

from __future__ import annotations

import pytest

from mtrag_graph.text.ellipsis import condition_clause, fragment_thing, purpose_phrase, resolve_fragment

# what a scripted embedder would say: these pairs are alike, everything else is not
ALIKE = {("daily", "monthly"): 0.8, ("O:", "W:"): 0.7, ("sign constraints", "right-hand side vector"): 0.6}


def similarity(thing, spans):
    return [ALIKE.get((thing, span), 0.1) for span in spans]


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("And daily ones?", "daily ones"),
        ("How about lz4?", "lz4"),
        ("What about the sign constraints?", "the sign constraints"),
        ("and for Windows", "Windows"),
        ("And how fast does it decompress?", None),  # a question of its own
        ("And which urgency?", None),
        ("What about the files that the second call of the tool creates?", None),  # too long for a fragment
        ("How do I prune?", None),
        ("What about debugging them in VSCode?", None),  # an activity on what "them" names, no thing
    ],
)
def test_a_fragment_is_an_opener_and_a_short_thing(question, thing):
    assert fragment_thing(question) == thing


def test_the_thing_takes_the_place_of_the_words_most_like_it():
    resolved = resolve_fragment("And daily ones?", ["How many monthly archives does prune keep?"], similarity)
    assert resolved.question == "How many daily archives does prune keep?"
    assert (resolved.replaced, resolved.by, resolved.how) == ("monthly", "daily", "similarity")


def test_a_name_takes_the_place_of_the_previous_questions_subject_pronoun():
    earlier = ["What ratio does zstd reach at level -1?", "And how fast does it decompress?"]
    resolved = resolve_fragment("How about lz4?", earlier, similarity)
    assert resolved.question == "How fast does lz4 decompress?"
    assert resolved.how == "pronoun"


def test_a_mark_stays_with_the_name_it_belongs_to():
    resolved = resolve_fragment("And O:?", ["What does the W: flag in its output mean?"], similarity)
    assert resolved.question == "What does the O: flag in its output mean?"


def test_a_fragment_after_a_fragment_builds_on_the_resolved_one():
    alike = {**ALIKE, ("right-hand side vector", "matrix A"): 0.9}
    earlier = ["Which file holds the matrix A?", "And the right-hand side vector?"]
    resolved = resolve_fragment(
        "What about the sign constraints?", earlier, lambda t, s: [alike.get((t, x), 0.1) for x in s]
    )
    assert resolved.base == "Which file holds the right-hand side vector?"
    assert resolved.question == "Which file holds the sign constraints?"


@pytest.mark.parametrize(
    ("question", "earlier"),
    [
        ("And over Q?", ["Which files does that call create?"]),  # nothing alike, no name for a pronoun
        ("And cmake?", ["What build type does the Meson project use by default?"]),
        ("What about FICA?", ["Deductions"]),  # no question to ask again
        ("And daily ones?", []),
        ("How do I prune?", ["How many monthly archives does prune keep?"]),  # no fragment
    ],
)
def test_no_resolution_when_the_place_is_not_sure(question, earlier):
    assert resolve_fragment(question, earlier, similarity) is None


def test_a_fragment_after_an_unresolved_fragment_is_not_resolved():
    earlier = ["Which files does that call create?", "And over Q?"]
    assert resolve_fragment("And daily ones?", earlier, similarity) is None


def test_a_prepositional_thing_takes_the_place_of_the_same_prepositions_phrase():
    earlier = [
        "How do I solve a linear system over the integers with 4ti2?",
        "Which files does that call create?",
    ]
    resolved = resolve_fragment("And over Q?", earlier, similarity)
    assert resolved.question == "How do I solve a linear system over Q with 4ti2?"
    assert (resolved.replaced, resolved.how) == ("over the integers", "phrase")
    on = resolve_fragment("What about on Windows?", ["How do I install borg on Linux?"], similarity)
    assert on.question == "How do I install borg on Windows?"


@pytest.mark.parametrize(
    ("question", "earlier"),
    [
        ("And in 2020?", ["How many people lived in Paris in 2019?"]),  # two phrases: no sure place
        ("And in it?", ["How do I install borg on Linux in Debian?"]),  # a pronoun names nothing
        ("And with compression?", ["How long does a backup take without compression?"]),
    ],
)
def test_a_prepositional_thing_without_one_sure_phrase_is_not_put_in_place(question, earlier):
    assert resolve_fragment(question, earlier, similarity) is None


@pytest.mark.parametrize(
    ("question", "clause"),
    [
        ("And if the same loop is inside a function?", "the same loop is inside a function"),
        ("What if I had declared --sauce first?", "I had declared --sauce first"),
        ("but if parents do", "parents do"),
        ("If I divorce, do I have to share my 401K?", None),  # a question of its own
        ("if I get away from the city can I see jupiter's rings?", None),
        ("What if I forget?", "I forget"),
        ("And how fast does it decompress?", None),
    ],
)
def test_a_condition_turn_is_an_opener_if_and_a_clause_that_asks_nothing(question, clause):
    assert condition_clause(question) == clause


def test_a_condition_takes_the_place_of_the_previous_questions_if_clause():
    earlier = ["What happens if I declare a static variable inside a for loop at the top level of a file?"]
    resolved = resolve_fragment("And if the same loop is inside a function?", earlier, similarity)
    assert resolved.question == "What happens if the same loop is inside a function?"
    assert (resolved.how, resolved.replaced) == (
        "condition",
        "if I declare a static variable inside a for loop at the top level of a file",
    )
    earlier = [
        "If I only declare a --no-sauce option, what value does sauce have when the user doesn't pass it?"
    ]
    resolved = resolve_fragment(
        "And if I had declared --sauce first and then added --no-sauce?", earlier, similarity
    )
    assert resolved.question == (
        "If I had declared --sauce first and then added --no-sauce, what value does sauce have when the user "
        "doesn't pass it?"
    )


def test_a_condition_after_a_condition_builds_on_the_resolved_question():
    earlier = ["What happens if the file is missing?", "And if it is empty?"]
    resolved = resolve_fragment("And if it is a link?", earlier, similarity)
    assert resolved.question == "What happens if it is a link?"
    assert resolved.base == "What happens if it is empty?"


@pytest.mark.parametrize(
    "earlier",
    [
        ["Could I request a waiver?"],  # no condition to replace
        ["Can you tell me if it supports Python?"],  # "if" means "whether"
        ["What happens if I run it twice, and if the lock is held?"],  # two conditions
        ["Deductions"],  # no question
    ],
)
def test_a_condition_without_one_sure_if_clause_is_left_to_the_rewrite(earlier):
    assert resolve_fragment("And if I use Windows?", earlier, similarity) is None


@pytest.mark.parametrize(
    ("question", "phrase"),
    [
        ("And to make an arrowhead point the other way?", "make an arrowhead point the other way"),
        ("but to keep a command out of the help", "keep a command out of the help"),
        ("And to what extent?", None),  # asks a question of its own
        ("How to create a cluster.", None),  # a how-to question, no fragment
        ("To be honest, is it free?", None),
    ],
)
def test_a_purpose_turn_is_a_conjunction_to_and_a_verb_phrase(question, phrase):
    assert purpose_phrase(question) == phrase


def test_a_purpose_is_asked_the_previous_how_to_questions_way():
    earlier = [
        "How do I change the size of all arrowheads globally rather than passing a size to every Arrow?"
    ]
    resolved = resolve_fragment("And to make an arrowhead point the other way?", earlier, similarity)
    assert resolved.question == "How do I make an arrowhead point the other way?"
    assert resolved.how == "purpose"
    assert resolve_fragment("And to delete it?", ["What is a cluster?"], similarity) is None  # no way to ask


def test_a_long_turn_is_no_fragment_and_is_not_matched():
    long_turn = "And if a" + " " * 20000 + "b?"
    assert condition_clause(long_turn) is None and purpose_phrase(long_turn) is None
    assert fragment_thing("And " + "x " * 300) is None
