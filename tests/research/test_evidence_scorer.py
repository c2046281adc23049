"""The evidence scorer experiment's data and rescoring (research/evidence_scorer_*.py; not kept: the
results page, documents.md)."""

from __future__ import annotations

import json
import random

from mtrag_graph.prompts.excerpts import Sentence
from research.evidence_scorer_eval import with_weight
from research.evidence_scorer_fit import answerable_pairs, first_ranked, synthetic_pairs


class OneRowCorpus:
    def search(self, query, depth=20):
        return [
            {"_id": "other", "text": "Pricing is per hour. Regions are listed on the page. Support is paid."}
        ]


def task(answer):
    text = (
        "Backups run nightly. The retention period of a snapshot is thirty days by default. "
        "You can change it in the console. Snapshots are stored in the region of the volume."
    )
    return {"targets": [{"text": answer}], "contexts": [{"document_id": "gold", "text": text}]}


def test_the_sentence_holding_the_answer_words_is_the_positive_and_the_rest_are_negatives():
    pairs = answerable_pairs(
        task("Snapshots are retained for thirty days by default."),
        "How long are snapshots kept?",
        OneRowCorpus(),
        random.Random(0),
    )
    positives = [p["sentence"] for p in pairs if p["label"] == 1]
    assert positives == ["The retention period of a snapshot is thirty days by default."]
    kinds = {p["kind"] for p in pairs if p["label"] == 0}
    assert kinds == {"same_passage", "other_passage"}
    assert all("thirty" not in p["sentence"] for p in pairs if p["label"] == 0)


def test_an_answer_no_sentence_states_gives_no_pairs():
    assert (
        answerable_pairs(task("Ask your administrator."), "Who decides?", OneRowCorpus(), random.Random(0))
        == []
    )


def test_synthetic_questions_give_a_positive_and_negatives_from_their_passage(tmp_path):
    path = tmp_path / "synth.jsonl"
    row = {"question": "How long is a snapshot kept?", "sentence": "Snapshots are kept for 30 days.",
           "passage_id": "p", "others": ["Backups run nightly at two.", "ok"]}  # fmt: skip
    path.write_text(json.dumps(row) + "\n")
    pairs = synthetic_pairs([path], seed=0)
    assert [(p["label"], p["sentence"]) for p in pairs] == [
        (1, "Snapshots are kept for 30 days."),
        (0, "Backups run nightly at two."),  # "ok" is too short to be a sentence
    ]


def test_the_scorer_probability_is_added_with_its_weight_and_the_best_ranked_counts():
    scored = [[Sentence(0, 0, "a", 0.5), Sentence(0, 1, "b", 0.4)]]
    assert [s.score for s in with_weight(scored, [[0.0, 1.0]], 0.25)[0]] == [0.5, 0.65]
    pairs = [
        {"task_id": "t", "kind": "positive", "label": 1},
        {"task_id": "t", "kind": "same_passage", "label": 0},
    ]
    assert first_ranked(pairs, [0.9, 0.1]) == 1.0
    assert first_ranked(pairs, [0.1, 0.9]) == 0.0
