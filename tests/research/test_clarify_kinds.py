"""research/clarify_kinds.py: the generated form drops a kind an earlier answer named, and only where
the result reads as a question."""

from __future__ import annotations

from mtrag_graph.judging.underspecified import rival_kinds
from research.clarify_kinds import generated_pairs

ANSWER = "The single-roller gin and the saw gin replaced the hand roller."


def _task(question: str) -> dict:
    turns = [("user", "What machines cleaned cotton?"), ("agent", ANSWER), ("user", question)]
    return {"task_id": "c<::>2", "input": [{"speaker": s, "text": t} for s, t in turns]}


def test_a_kind_after_a_determiner_is_dropped_and_the_twin_is_the_turn_as_it_was():
    pairs = list(generated_pairs([_task("By how much did the saw gin increase production?")]))
    assert len(pairs) == 1
    pair = pairs[0]
    assert pair["underspecified"] == "By how much did the gin increase production?"
    assert pair["answerable"] == "By how much did the saw gin increase production?"
    assert rival_kinds(pair["history"], pair["underspecified"]) == ("gin", ["single-roller", "saw"])
    assert rival_kinds(pair["history"], pair["answerable"]) is None


def test_no_pair_where_the_kind_has_another_determiner_or_the_answer_named_one_kind():
    assert list(generated_pairs([_task("Is my saw gin safe?")])) == []
    one = _task("By how much did the saw gin increase production?")
    one["input"][1]["text"] = "The saw gin replaced the hand roller."
    assert list(generated_pairs([one])) == []
