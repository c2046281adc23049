"""Parsers of judge replies, on the messy outputs judges really produce."""

from __future__ import annotations

import pytest

from mtrag_graph.measure.evaluation.judges import parse_rating, parse_statements, parse_verdict, rating_score

IDK_CHOICES = ("yes", "no", "partial")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Rating: [[7]]", 0.7),
        ("The response is faithful but misses a detail.\n\nRating: [[8]]", 0.8),
        ('{"answer": "Rating: [[10]]"}', 1.0),
        ("Rating: [[ 3 ]]", 0.3),
        ("**Rating**: 6/10", 0.6),
        ("I would give [[5]] at first, but on reflection Rating: [[4]]", 0.4),
    ],
)
def test_rating_is_parsed_from_messy_replies(reply, expected):
    assert parse_rating(reply) == pytest.approx(expected)


@pytest.mark.parametrize("reply", ["Rating: [[11]]", "Rating: [[0]]", "Excellent answer!", ""])
def test_unparseable_or_out_of_range_rating_scores_one_half(reply):
    assert rating_score(reply) == 0.5


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes", "yes"),
        ("**Partial**.", "partial"),
        ('{"answer": "no"}', "no"),
        ("No, the response answers the question.", "no"),
        ("Answer: partial", "partial"),
        ("The verdict is clear. Verdict: yes", "yes"),
    ],
)
def test_verdict_is_parsed_from_messy_replies(reply, expected):
    assert parse_verdict(reply, IDK_CHOICES) == expected


def test_verdict_without_any_choice_is_none():
    assert parse_verdict("I cannot judge this.", ("yes", "no")) is None


def test_statements_from_a_numbered_list():
    reply = "Here are the statements:\n1. The sky is blue.\n2) Water is wet.\n\n3. Fire is hot."
    assert parse_statements(reply) == ["The sky is blue.", "Water is wet.", "Fire is hot."]


def test_statements_from_fenced_json():
    reply = 'Sure!\n```json\n{"statements": ["A is B.", "C is D."]}\n```'
    assert parse_statements(reply) == ["A is B.", "C is D."]


def test_statements_from_a_bare_json_list_with_bullets_elsewhere():
    assert parse_statements('["One.", "Two."]') == ["One.", "Two."]


def test_statements_are_capped():
    reply = "\n".join(f"- claim {i}." for i in range(20))
    assert len(parse_statements(reply, limit=5)) == 5


def test_statements_of_an_empty_reply_are_empty():
    assert parse_statements("   ") == []
