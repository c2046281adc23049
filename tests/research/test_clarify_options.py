"""research/clarify_options.py: the options the clarify node would offer, and the threshold chosen."""

from __future__ import annotations

import numpy as np

from research.clarify_options import auc, chosen_threshold, option_sets, scored, sentence_of

CLINICS = [
    {"document_id": "a", "title": "Hibbing VA Clinic", "text": "Hibbing VA Clinic offers care."},
    {"document_id": "b", "title": "Hayward VA Clinic", "text": "Hayward VA Clinic offers care."},
]


def task(task_id: str, question: str, label: str, contexts: list) -> dict:
    return {"task_id": task_id, "input": [{"speaker": "user", "text": question}], "contexts": contexts,
            "answerability": [label]}  # fmt: skip


def test_the_options_are_those_the_clarify_node_would_offer_with_their_sentences():
    rows = option_sets([task("c<::>1", "What services does the clinic provide?", "UNDERSPECIFIED", CLINICS),
                        task("d<::>1", "How do bees talk?", "ANSWERABLE", [])])  # fmt: skip
    assert len(rows) == 1
    assert rows[0]["kind"] == "clinic" and rows[0]["options"] == ["Hibbing VA Clinic", "Hayward VA Clinic"]
    assert rows[0]["sentences"][0] == "Hibbing VA Clinic offers care."
    assert (
        sentence_of("lunar eclipse", ["A lunar  eclipse is red. The sun is not."])
        == "A lunar  eclipse is red."
    )


def test_own_options_are_scored_beside_their_turn_and_foreign_ones_beside_other_conversations():
    rows = option_sets([task("c<::>1", "What services does the clinic provide?", "UNDERSPECIFIED", CLINICS),
                        task("e<::>1", "What services does the clinic provide today?", "UNDERSPECIFIED",
                             CLINICS)])  # fmt: skip

    def embed(texts):  # the first conversation's turn is close to the options, the second far
        rows = [[0.0, 1.0] if "today" in t else [1.0, 0.0] for t in texts]
        return np.asarray(rows)

    result = scored(rows, embed, with_conversation=False, in_sentence=False)
    assert result["own"] == [[1.0, 1.0], [0.0, 0.0]]
    assert result["foreign"] == [0.0, 0.0, 1.0, 1.0]


def test_the_threshold_is_the_highest_that_keeps_nine_in_ten_own_options():
    assert chosen_threshold([0.5] * 9 + [0.05]) == 0.4
    assert chosen_threshold([0.22] * 9 + [0.05]) == 0.2
    assert auc([0.9, 0.8], [0.1, 0.8]) == 0.875
