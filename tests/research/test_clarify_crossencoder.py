"""research/clarify_crossencoder.py: the pair a turn becomes, and the asked rates by group."""

from __future__ import annotations

from research.clarify_crossencoder import TURN_WORDS, exchange, pair_of, rates


def test_a_turn_is_its_question_and_its_last_exchange_cut_short():
    history = [
        {"speaker": "user", "text": "What is a Roth IRA?"},
        {"speaker": "agent", "text": " ".join(["word"] * (TURN_WORDS + 5))},
        {"speaker": "user", "text": "And its income limit?"},
        {"speaker": "agent", "text": "It depends on filing status."},
    ]
    pair = pair_of(history, "How big is it?", 1, "underspecified twin")
    assert pair["question"] == "How big is it?" and pair["label"] == 1
    assert pair["passage"] == "user: And its income limit? agent: It depends on filing status."
    long = exchange(history[:2])
    assert long.endswith("...") and long.split().count("word") == TURN_WORDS
    assert exchange([]) == "(first turn)"


def test_rates_count_the_turns_at_or_over_the_threshold_by_group():
    pairs = [{"group": "a"}, {"group": "a"}, {"group": "b"}]
    assert rates(pairs, [0.9, 0.1, 0.5], 0.5) == {"a": [1, 2], "b": [1, 1]}
