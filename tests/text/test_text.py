"""The one text layer: words, stopwords, content stems, sentences, and the refusal recogniser."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from mtrag_graph.measure.evaluation.golden import GoldenResponse
from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.text import (
    STOPWORDS,
    claims,
    content_stems,
    content_words,
    decline_verdict,
    declines,
    sentence_spans,
    sentences,
    stem,
    words,
)


def test_words_are_lower_case_alphanumeric_runs():
    assert words("Don't pay $1,000 for IBM-Cloud!") == ["don", "t", "pay", "1", "000", "for", "ibm", "cloud"]


def test_content_stems_drop_stopwords_and_stem_the_rest():
    assert content_stems("Can you tell me what the bees are dancing for?") == ["bee", "danc"]


def test_content_words_are_unstemmed_and_at_least_three_letters():
    assert content_words("Do the AI bees dance?") == {"bees", "dance"}


def test_plural_and_singular_share_a_stem():
    assert stem("libraries") == stem("Library")


def test_question_request_words_are_stopwords():
    assert {"tell", "know", "please"} <= STOPWORDS


def test_sentences_split_at_sentence_ends_and_line_breaks_and_drop_bullets():
    text = "  First claim here.  Second one!\n\n- third item\n1) fourth item"
    assert sentences(text) == ["First claim here.", "Second one!", "third item", "fourth item"]


def test_sentence_spans_locate_the_sentences_in_the_text():
    text = "  First claim here.  Second one!\n\n- third item"
    assert [text[s:e] for s, e in sentence_spans(text)] == sentences(text)


def test_a_sentence_without_content_words_is_no_claim():
    assert claims("Yes. Bees dance. What about it?") == ["Bees dance."]


@pytest.mark.parametrize(
    "text",
    [
        "I do not have specific information.",
        "I don't know the answer based on the provided documents.",
        "I am sorry that I do not have that information.",
        "This is not mentioned in the documents.",
        "I cannot answer that from the given passages.",
        "The documents do not contain information about the schedule.",
        "I am sorry I don't have any specific knowledge about who acts as a photographer.",
        "Sorry, but I have no information regarding when it developed.  However, the first child was born in 1983.",
        "The documents do not provide an answer to the question.",
        "Unfortunately, I do not have information on how to keep your address confidential.",
        "You're welcome! If you have any more questions, feel free to ask.",
        "",
    ],
)
def test_refusals_and_pleasantries_decline(text):
    assert decline_verdict(text) == "declines"


@pytest.mark.parametrize(
    "text",
    [
        "The documents do not provide specific information about chemotherapy before puberty. But, yes, "
        "chemotherapy can affect fertility: it can damage the DNA of the cells in the testicles and the "
        "ovaries, and the effect depends on the drug, the dose and the age of the patient.",
        "The documents do not specify jail sentences, but you can opt for the Division of Child Support "
        "Services to enforce your support orders: they can suspend the other parent's driver's license, "
        "intercept tax refunds and report the debt to credit agencies, among other measures.",
    ],
)
def test_a_caveat_before_a_real_answer_is_partial(text):
    assert decline_verdict(text) == "partial"
    assert not declines(text)


@pytest.mark.parametrize(
    "text",
    [
        "Paris is the capital of France.",
        "Yes, you can visit the law library. I do not have the opening hours, but the desk can help.",
        "The Office is widely regarded as one of the greatest television series of all time.",
    ],
)
def test_answers_are_answers(text):
    assert decline_verdict(text) == "answers"


def test_a_refusal_with_a_short_remark_declines():
    assert declines("The documents do not mention it. Sorry, maybe ask the clinic.")


def test_a_refusal_late_in_an_answer_does_not_make_it_decline():
    assert decline_verdict("Bees dance to show where food is. The documents do not say why.") == "answers"


def test_a_long_answer_that_thanks_the_user_is_not_a_pleasantry():
    text = "You're welcome. " + "The form APP-001 explains the appeal procedure step by step. " * 6
    assert decline_verdict(text) == "answers"


def test_the_threshold_scan_scores_each_remark_length_against_the_official_verdict():
    """research/refusal_threshold.py: a refusal with a 25-word remark that people called a decline is
    right under REMARK_WORDS 30, wrong under 20."""
    path = Path(__file__).resolve().parents[2] / "research" / "refusal_threshold.py"
    spec = importlib.util.spec_from_file_location("refusal_threshold", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    def response(text, official_idk):
        item = EvalItem(task_id=text[:10], line=1, answerability="ANSWERABLE", domain=None, history=[],
                        question="q?", passages=["p."], target="t.", response=text)  # fmt: skip
        # answerable: conditional_idk 1 means it did not say IDK
        return GoldenResponse(item, text[:10], "m", {}, {"conditional_idk": 1 - official_idk})

    remark = " ".join(["word"] * 25)
    responses = [
        response(f"I do not have information on that. {remark}.", 1),
        response("Paris is the capital of France.", 0),
    ]
    table = script.scan(responses, candidates=(20, 30))
    assert table[30][0] == 1.0 and table[20][0] == 0.5


def test_a_title_or_an_initial_ends_no_sentence():
    assert sentences("It names Dr. Ellen Ochoa. J. K. Rowling wrote it. It is in the U.S. today.") == [
        "It names Dr. Ellen Ochoa.",
        "J. K. Rowling wrote it.",
        "It is in the U.S. today.",
    ]
