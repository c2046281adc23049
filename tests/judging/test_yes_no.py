"""A yes/no answer settled on the sentence that decides it, quoted (judging/yes_no.py)."""

from __future__ import annotations

import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.judging import yes_no
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.testing import fake_context, make_task

PDF_PASSAGE = (
    "Chapter 1. Beginner's guide 7\n"
    "Note.\n"
    "\u2022 In 4ti2 version 1.3.1 and later, all appearing numbers have to be\n"
    "integers.\n"
    "\u2022 Consequently, qsolve only supports homogeneous linear systems, that is\n"
    "systems with b = 0, since minimal inhomogeneous solutions could have rational components.\n"
)
OTHER = "The sign file may declare a variable to be non-negative. The default setting for each variable is 0."
QUESTION = "Does qsolve support inhomogeneous systems?"
EMBED = get_embedder("hashing:64").embed


def test_a_pdf_passage_is_cut_into_whole_sentences_with_list_items_apart():
    found = yes_no.passage_sentences(PDF_PASSAGE)
    assert "In 4ti2 version 1.3.1 and later, all appearing numbers have to be integers." in found
    assert any(s.startswith("Consequently, qsolve only supports homogeneous linear systems") for s in found)
    assert not any(s.startswith(("Chapter", "Note")) for s in found)  # too short to be a candidate


def test_a_question_in_a_passage_is_no_candidate():
    faq = "Do I need the tkinter package to install an rpm binary? No, you only need it for the GUI xasy."
    assert yes_no.passage_sentences(faq) == ["No, you only need it for the GUI xasy."]


def test_the_candidates_are_the_sentences_closest_to_the_question():
    candidates = yes_no.candidate_sentences(QUESTION, [{"text": OTHER}, {"text": PDF_PASSAGE}], EMBED, 2)
    assert candidates[0][0] == 1 and "qsolve" in candidates[0][1]


def test_with_the_draft_the_quote_is_the_sentence_the_draft_rests_on():
    question = "Is Charis SIL just a copy of Charter?"
    passage = {
        "text": "Charis SIL is a serif typeface for Roman and Cyrillic scripts. The design of the basic character "
        "set of Charis SIL is similar to Bitstream Charter. Charis SIL is very closely based on Charter, "
        "however the glyphs were completely redrawn from visual reference only."
    }
    draft = "Yes, Charis SIL is very closely based on Charter, however the glyphs were completely redrawn."
    by_question = yes_no.candidate_sentences(question, [passage], EMBED, 1)
    by_both = yes_no.candidate_sentences(question, [passage], EMBED, 1, draft=draft)
    assert "glyphs were completely redrawn" in by_both[0][1] and by_both != by_question
    # a draft of a yes or no alone (under MIN_WORDS words left) ranks by the question only
    assert yes_no.candidate_sentences(question, [passage], EMBED, 1, draft="Yes, it is.") == by_question
    assert yes_no.draft_body("No, you don't need tkinter.") == "you don't need tkinter."
    answer, record = yes_no.settle(
        draft, question, [passage], ScriptedChatModel(responses=["unclear"]), EMBED,
        min_confidence=0.9, quote_from="question+draft",
    )  # fmt: skip
    assert record["quote_from"] == "question+draft" and "completely redrawn" in answer
    with pytest.raises(ValueError, match="yes_no_quote_from"):
        yes_no.settle(draft, question, [passage], ScriptedChatModel(responses=["yes"]), EMBED,
                      min_confidence=0.9, quote_from="draft")  # fmt: skip


@pytest.mark.parametrize(
    ("question", "applies"),
    [(QUESTION, True), ("Is it on by default?", True), ("Which solver handles it?", False)],
)
def test_only_yes_no_questions_are_settled(question, applies):
    assert yes_no.applies(question, "Yes, it does.") is applies
    assert not yes_no.applies(question, "I don't know the answer based on the provided documents.")


def _settle(draft: str, verdicts: list[str]) -> tuple[str, dict]:
    return yes_no.settle(
        draft, QUESTION, [{"text": OTHER}, {"text": PDF_PASSAGE}], ScriptedChatModel(responses=verdicts), EMBED,
        min_confidence=0.9,
    )  # fmt: skip


def test_a_draft_the_quote_contradicts_is_kept_and_the_disagreement_recorded():
    # issue 73: the verdict on the quote turned a person's right "Yes, I have. ..." into "No."
    draft = "Yes, qsolve supports inhomogeneous systems."
    answer, record = _settle(draft, ["no"])
    assert answer.startswith(f"{draft} The document says: \u201c")
    assert "only supports homogeneous linear systems" in answer
    assert record["outcome"] == "quote disagrees" and record["verdict"] == "no" and record["passage"] == 1
    assert record["agrees"] is False and record["said"] == "yes"


def test_a_draft_the_quote_agrees_with_stays_before_it():
    answer, record = _settle("No, only homogeneous systems.", ["no"])
    assert answer.startswith("No, only homogeneous systems. The document says: \u201c")
    assert record["outcome"] == "quote added" and record["agrees"] is True


def test_without_a_sure_verdict_the_draft_stays_before_the_quote():
    draft = "Yes, qsolve supports inhomogeneous systems."
    answer, record = _settle(draft, ["unclear"])
    assert answer.startswith(f"{draft} The document says: \u201c")
    assert record["outcome"] == "quote added" and record["verdict"] is None and record["agrees"] is None


def test_an_unparseable_verdict_leaves_the_draft_and_the_quote_and_records_the_reply():
    answer, record = _settle("Yes, it does.", ["maybe so", "who knows"])  # one retry (the default)
    assert answer.startswith("Yes, it does. The document says:")
    assert record["p"] is None and record["raw"] == "who knows"


def test_the_graph_quotes_and_cites_the_deciding_sentence():
    model = ScriptedChatModel(responses=["Yes, qsolve supports inhomogeneous systems.", "no"])
    context = fake_context(generate_model=model, grounding="facts", yes_no_quote=True, rewrite=[QUESTION])
    task = make_task([QUESTION], [OTHER, PDF_PASSAGE])
    out = build_graph(output="state").invoke({"task": task}, context=context)
    assert out["answer"].startswith("Yes, qsolve supports inhomogeneous systems. The document says:")
    assert out["grounding"]["yes_no"]["outcome"] == "quote disagrees"
    assert out["verdict"]["signals"]["yes_no_agrees"] is False
    cited = {d for s in out["grounding"]["sentences"] if s["supported"] for d in s["document_ids"]}
    assert "d1" in cited
