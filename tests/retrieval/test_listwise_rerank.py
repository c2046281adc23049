from __future__ import annotations

from mtrag_graph.models.calls import CallLog
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.retrieval.listwise import complete_ordering, listwise_rerank

PASSAGES = [{"document_id": d, "title": "", "text": f"text {d}"} for d in ["a", "b", "c", "d"]]


def test_ordering_drops_duplicates():
    order, repairs = complete_ordering([2, 2, 1, 3, 4], 4)
    assert order == [1, 0, 2, 3] and repairs["duplicates"] == 1


def test_ordering_appends_missing_passages_in_input_order():
    order, repairs = complete_ordering([3], 4)
    assert order == [2, 0, 1, 3] and repairs["missing"] == 3


def test_ordering_drops_numbers_out_of_range_and_non_numbers():
    order, repairs = complete_ordering([0, 5, "x", True, "[2]", 1], 3)
    assert order == [1, 0, 2] and repairs["unknown"] == 4


def test_reranker_applies_the_model_ordering():
    model = ScriptedChatModel(responses=['{"ranking": [3, 1, 4, 2]}'])
    ranked, report = listwise_rerank(model, "q?", PASSAGES, CallLog("rerank"))
    assert [p["document_id"] for p in ranked] == ["c", "a", "d", "b"]
    assert report["parsed"]


def test_reranker_repairs_a_partial_ordering_with_duplicates():
    model = ScriptedChatModel(responses=['{"ranking": ["4", "4", 2]}'])
    ranked, _ = listwise_rerank(model, "q?", PASSAGES, CallLog("rerank"))
    assert [p["document_id"] for p in ranked] == ["d", "b", "a", "c"]


def test_reranker_keeps_the_input_order_when_no_reply_parses():
    model = ScriptedChatModel(responses=["I think c is best"])
    ranked, report = listwise_rerank(model, "q?", PASSAGES, CallLog("rerank"), retries=1)
    assert ranked == PASSAGES
    assert not report["parsed"] and len(report["raws"]) == 2
