from __future__ import annotations

from benchmarks.real_documents.data import Turn
from research.sample_ceiling import ceiling, render, sample_right

TURN = Turn(
    question="How many points does it sample by default?",
    answer="100 points.",
    answerable=True,
    key_facts=(("100",),),
    where=None,
)
YES_NO = Turn(question="Is it boxed by default?", answer="No, the default is nobox.", answerable=True,
              key_facts=(("nobox",),), where=None)  # fmt: skip


def test_a_sample_is_scored_as_an_answer_is():
    assert sample_right("It samples 100 points.", TURN)
    assert not sample_right("It samples 1000 points.", TURN)  # a number is not part of a longer one
    assert not sample_right("I don't know.", TURN)
    assert not sample_right("Yes, the default is nobox.", YES_NO)  # a yes against the reference's no


def test_the_table_counts_any_majority_and_all_declined_per_row():
    verdicts = [
        {"task_id": "a", "answerable": True, "right": False, "retrieved": True},
        {"task_id": "b", "answerable": True, "right": False, "retrieved": True},
        {"task_id": "c", "answerable": True, "right": True, "retrieved": True},
        {"task_id": "u", "answerable": False, "right": False, "retrieved": None},
    ]
    samples = {
        "a": ["100 points.", "I don't know.", "50 points."],
        "b": ["I don't know.", "I don't know.", "I don't know."],
        "c": ["100.", "100 points", "It uses 100."],
        "u": ["100 points."],
    }
    table = ceiling(verdicts, samples, {"a": TURN, "b": TURN, "c": TURN, "u": TURN})
    assert table["miss, fact kept"] == {"tasks": 2, "any": 1, "majority": 0, "all declined": 1}
    assert table["right"] == {"tasks": 1, "any": 1, "majority": 1, "all declined": 0}
    assert "at most 2 of 3" in render(table, run_right=1, answerable=3)
