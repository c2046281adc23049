"""Few-shot exemplars: the medoid, the categories and the shipped file."""

from __future__ import annotations

import numpy as np

from mtrag_graph.prompts.exemplars import (
    CATEGORIES,
    category_of,
    load_exemplars,
    medoid_index,
    select_exemplars,
)


def test_medoid_is_the_point_with_the_smallest_total_distance():
    # unit vectors at 0, 10, 20 and 90 degrees; summed cosine distances (1 - cos of the angle between):
    # 0: 0.015+0.060+1 = 1.075, 10: 0.015+0.015+0.826 = 0.856, 20: 0.060+0.015+0.658 = 0.734 (smallest),
    # 90: 1+0.826+0.658 = 2.484. The outlier pulls the medoid from the middle one (10) to 20.
    angles = np.radians([0, 10, 20, 90])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    assert medoid_index(vectors) == 2


def test_medoid_ignores_vector_length():
    vectors = np.array([[10.0, 0.0], [0.0, 1.0], [1.0, 1.0], [5.0, 4.0]])
    assert medoid_index(vectors) == 2  # (1,1) and (5,4) point alike; (1,1) sits between the extremes


def task(task_id, turns, contexts, answerability, multi_turn="N/A", answer="An answer."):
    speakers = ["user", "agent"]
    return {
        "task_id": task_id,
        "input": [{"speaker": speakers[i % 2], "text": t} for i, t in enumerate(turns)],
        "contexts": [{"document_id": "d", "text": c} for c in contexts],
        "targets": [{"speaker": "agent", "text": answer}],
        "answerability": [answerability],
        "Multi-Turn": [multi_turn],
    }


def test_categories_follow_passages_history_and_turn_type():
    assert category_of(task("a", ["q?"], [], "UNANSWERABLE")) == "no_passages"
    assert category_of(task("b", ["q?"], ["p."], "ANSWERABLE")) == "first_turn"
    assert (
        category_of(task("c", ["q?", "a.", "q2?"], ["p."], "ANSWERABLE", "Follow-up")) == "history_follow_up"
    )
    assert category_of(task("d", ["q?", "a.", "q2?"], ["p."], "ANSWERABLE", "Clarification")) == (
        "history_clarification"
    )
    assert category_of(task("e", ["q?"], ["p."], "PARTIAL")) is None
    assert category_of(task("f", ["q?"], [], "CONVERSATIONAL")) is None


def test_select_exemplars_takes_each_categorys_medoid():
    tasks = [
        task("none-1", ["alpha?"], [], "UNANSWERABLE"),
        task("first-1", ["one?"], ["p."], "ANSWERABLE"),
        task("first-2", ["two?"], ["p."], "ANSWERABLE"),
        task("first-3", ["three?"], ["p."], "ANSWERABLE"),
        task("follow-1", ["q?", "a.", "four?"], ["p."], "ANSWERABLE", "Follow-up"),
        task("clar-1", ["q?", "a.", "five?"], ["p."], "ANSWERABLE", "Clarification"),
    ]
    directions = {"one?": [1.0, 0.0], "two?": [0.8, 0.6], "three?": [0.0, 1.0]}

    def embed(texts):
        return np.array([directions.get(t.split("\n")[0], [1.0, 1.0]) for t in texts])

    chosen = select_exemplars(tasks, embed)
    assert [e["category"] for e in chosen] == [name for name, _ in CATEGORIES]
    assert [e["task_id"] for e in chosen] == ["none-1", "first-2", "follow-1", "clar-1"]
    assert chosen[0]["answer"] == "" and chosen[2]["history"][-1] == {"speaker": "agent", "text": "a."}


def test_the_shipped_exemplars_are_short_and_cover_every_category():
    exemplars = load_exemplars()
    assert [e["category"] for e in exemplars] == [name for name, _ in CATEGORIES]
    for exemplar in exemplars:
        assert len(exemplar["passage"]) <= 260 and len(exemplar["answer"]) <= 240
