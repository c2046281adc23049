"""LLM listwise reranking: the reply's order is parsed strictly and applied; a reply naming no passage is
asked once more, then the given order stands (counted); ``listwise:SPEC`` reaches it through ``get_reranker``."""

from __future__ import annotations

import logging
import threading
from functools import partial

import pytest

from mtrag_graph.models import calls, listwise
from mtrag_graph.models.calls import TransientModelError
from mtrag_graph.models.embeddings import get_reranker
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.listwise import ListwiseReranker, parse_ranking, shown_text
from mtrag_graph.nodes.rerank import rerank_passages

PASSAGES = ["alpha\nfirst text", "beta\nsecond text", "gamma\nthird text"]


def order_of(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def reranker(*replies: str | BaseException, depth: int = 10) -> tuple[ListwiseReranker, ScriptedChatModel]:
    model = ScriptedChatModel(responses=list(replies))
    return ListwiseReranker(model, depth=depth), model


def test_the_replys_order_is_applied_with_strictly_falling_scores():
    scorer, _ = reranker("[3] > [1] > [2]")
    scores = scorer.score("q", PASSAGES)
    assert order_of(scores) == [2, 0, 1]
    assert scores[2] > scores[0] > scores[1] > 0


def test_repeats_and_out_of_range_identifiers_are_ignored():
    assert parse_ranking("[2] > [0] > [2] > [7] > [1] > [3]", 3) == [1, 0, 2]


def test_bare_numbers_do_not_count_as_identifiers():
    assert parse_ranking("2 > 1 > 3", 3) == []


def test_passages_the_reply_does_not_name_follow_in_their_given_order():
    scorer, _ = reranker("[3]")
    assert order_of(scorer.score("q", [*PASSAGES, "delta\nfourth"])) == [2, 0, 1, 3]


def test_passages_beyond_the_depth_are_not_shown_and_stay_below_in_their_order():
    scorer, model = reranker("[2] > [1]", depth=2)
    scores = scorer.score("q", [*PASSAGES, "delta\nfourth"])
    assert order_of(scores) == [1, 0, 2, 3]
    prompt = str(model.calls[0]["messages"][0].content)
    assert "[1] alpha: first text" in prompt and "[2] beta: second text" in prompt and "gamma" not in prompt


def test_an_unparseable_reply_is_asked_again_once_with_a_correction():
    scorer, model = reranker("I think the second.", "[2] > [3] > [1]")
    assert order_of(scorer.score("q", PASSAGES)) == [1, 2, 0]
    assert len(model.calls) == 2
    assert "[2] > [1] > [3]" in str(model.calls[1]["messages"][-1].content)
    assert scorer.fallbacks == 0


def test_two_unparseable_replies_keep_the_given_order_and_record_the_fallback(caplog):
    scorer, model = reranker("no idea")
    with caplog.at_level(logging.WARNING, logger="mtrag_graph"):
        scores = scorer.score("q", PASSAGES)
    assert order_of(scores) == [0, 1, 2] and len(model.calls) == 2
    assert scorer.fallbacks == 1
    assert "named no passage" in caplog.text


def test_a_model_that_keeps_failing_transiently_keeps_the_given_order(monkeypatch):
    monkeypatch.setattr(listwise, "invoke_text", partial(calls.invoke_text, backoff_seconds=0))
    model = ScriptedChatModel(responses=[TransientModelError("down")])
    scorer = ListwiseReranker(model)
    assert order_of(scorer.score("q", PASSAGES)) == [0, 1, 2]
    assert scorer.fallbacks == 1


def test_the_call_decodes_deterministically_within_a_token_limit():
    scorer, model = reranker("[1] > [2] > [3]")
    scorer.score("q", PASSAGES)
    options = model.calls[0]["options"]
    assert options["temperature"] == 0.0 and 0 < options["max_tokens"] <= 64


def test_a_single_passage_needs_no_model_call():
    scorer, model = reranker("[1]")
    assert scorer.score("q", ["only\none"]) == [1.0] and scorer.score("q", []) == []
    assert model.calls == []


def test_a_passage_is_shown_as_title_and_its_first_words():
    assert shown_text("Title here\none two three four five", 4) == "Title here: one two"
    assert shown_text("no title line at all", 3) == "no title line"


def test_concurrent_queries_get_their_own_orders():
    def responder(messages, options):
        question = str(messages[0].content).split("Question: ")[1].split("\n")[0]
        return "[3] > [2] > [1]" if question == "reverse" else "[1] > [2] > [3]"

    scorer = ListwiseReranker(ScriptedChatModel(responder=responder))
    results: dict[str, list[int]] = {}

    def run(question: str) -> None:
        results[question] = order_of(scorer.score(question, PASSAGES))

    threads = [threading.Thread(target=run, args=(q,)) for q in ("reverse", "forward")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"reverse": [2, 1, 0], "forward": [0, 1, 2]}


def test_get_reranker_dispatches_listwise_specs_to_the_named_model():
    scorer = get_reranker("listwise:scripted:[2] > [1] > [3]", "hashing:64")
    assert isinstance(scorer, ListwiseReranker)
    assert scorer.name == "listwise(scripted:[2] > [1] > [3])"
    assert order_of(scorer.score("q", PASSAGES)) == [1, 0, 2]


def test_bare_listwise_uses_the_large_model(monkeypatch):
    monkeypatch.setenv("MTRAG_LARGE_MODEL", "scripted:[1] > [3] > [2]")
    assert get_reranker("listwise").name == "listwise(scripted:[1] > [3] > [2])"


def test_an_unknown_reranker_spec_names_listwise_among_the_valid_ones():
    with pytest.raises(ValueError, match="listwise"):
        get_reranker("listwize")


def test_rerank_passages_keeps_the_models_order():
    passages = [{"id": str(i), "title": t, "text": f"text {i}"} for i, t in enumerate(["a", "b", "c"])]
    kept = rerank_passages(
        "q", passages, reranker="listwise:scripted:[3] > [1] > [2]", embedder="hashing:64", top_k=2
    )
    assert [p["id"] for p in kept] == ["2", "0"]
