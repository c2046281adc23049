"""Citations: each answer sentence with the passages that support it."""

from __future__ import annotations

from mtrag_graph.citations import answer_citations, cited_answer, sentence_citations

PASSAGES = [
    {"document_id": "eiffel", "text": "The Eiffel Tower opened to the public on 15 May 1889 in Paris."},
    {"document_id": "liberty", "text": "The Statue of Liberty was dedicated on 28 October 1886 in New York."},
]


def test_each_sentence_cites_the_passage_that_holds_its_words():
    rows = sentence_citations(
        "The Eiffel Tower opened on 15 May 1889. The Statue of Liberty was dedicated in 1886.", PASSAGES
    )
    assert [(r["passages"], r["document_ids"], r["supported"]) for r in rows] == [
        ([0], ["eiffel"], True),
        ([1], ["liberty"], True),
    ]
    assert set(rows[0]) == {"text", "supported", "passages", "document_ids", "score"}


def test_a_sentence_the_passages_do_not_hold_cites_nothing_and_is_unsupported():
    (row,) = sentence_citations("Bananas grow quickly in tropical greenhouses.", PASSAGES)
    assert row["passages"] == [] and row["supported"] is False and row["score"] < 0.6


def test_the_grounding_check_wins_when_the_state_has_one():
    grounding = {"sentences": [{"text": "x", "supported": True, "passages": [1], "document_ids": ["liberty"],
                                "score": 0.9}], "dropped": 0}  # fmt: skip
    state = {"answer": "The Eiffel Tower opened in 1889.", "kept_passages": PASSAGES, "grounding": grounding}
    assert answer_citations(state) == grounding["sentences"]
    assert answer_citations({**state, "grounding": None})[0]["document_ids"] == ["eiffel"]


def test_an_abstention_cites_nothing():
    state = {"answer": "I don't know.", "kept_passages": PASSAGES, "abstain_reason": "gate_no"}
    assert answer_citations(state) == []


def test_markers_number_passages_in_order_of_first_citation():
    rows = [
        {"text": "B first.", "passages": [1]},
        {"text": "Both.", "passages": [0, 1]},
        {"text": "None.", "passages": []},
    ]
    assert cited_answer(rows) == ("B first. [1] Both. [2][1] None.", [1, 0])
