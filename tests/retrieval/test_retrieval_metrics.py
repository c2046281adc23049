from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mtrag_graph.retrieval.metrics import aggregate, evaluate_files, load_qrels, score_queries

# q1: relevant d1, d3. Ranking d1 (rel), d2, d3 (rel), d4.
# DCG@3 = 1/log2(2) + 1/log2(4) = 1.5 ; IDCG@3 = 1 + 1/log2(3) = 1.6309
RUN = {"q1": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
QRELS = {"q1": {"d1": 1, "d3": 1}}


def test_ndcg_matches_a_hand_computed_value():
    scores = score_queries(RUN, QRELS)["q1"]
    assert scores["nDCG@1"] == pytest.approx(1.0)
    assert scores["nDCG@3"] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))


def test_recall_matches_a_hand_computed_value():
    scores = score_queries(RUN, QRELS)["q1"]
    assert (scores["Recall@1"], scores["Recall@3"]) == (pytest.approx(0.5), pytest.approx(1.0))


def test_queries_without_qrels_are_ignored():
    assert set(score_queries({**RUN, "q2": {"d1": 1.0}}, QRELS)) == {"q1"}


def test_a_query_with_no_passages_scores_zero():
    assert score_queries({"q1": {}}, QRELS)["q1"]["Recall@10"] == 0.0


def test_overall_mean_weights_domains_by_query_count():
    per_query = {"a": {"m": 1.0}, "b": {"m": 1.0}, "c": {"m": 0.0}}
    table = aggregate(per_query, {"a": "cloud", "b": "cloud", "c": "fiqa"})
    assert table["all"]["m"] == pytest.approx(2 / 3)
    assert table["cloud"]["queries"] == 2


def test_qrels_header_is_skipped_and_scores_are_binary(tmp_path: Path):
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq<::>1\td1\t2\nq<::>1\td2\t0\n")
    assert load_qrels(path) == {"q::1": {"d1": 1, "d2": 0}}


def test_ibmcloud_qrels_count_as_cloud_and_ids_match_across_spellings(tmp_path: Path):
    qrels = tmp_path / "ibmcloud_qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nc<::>1\td1\t1\n")
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"task_id": "c::1", "contexts": [{"document_id": "d1", "score": 1.0}]}) + "\n")
    table = evaluate_files(run, [qrels])
    assert table["cloud"]["nDCG@1"] == 1.0 and table["all"]["queries"] == 1
