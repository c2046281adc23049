"""The refusal detector: refusals, refusals with a short remark, caveats before an answer, pleasantries."""

from __future__ import annotations

import pytest

from mtrag_graph.judging import decline_verdict, declines


@pytest.mark.parametrize(
    "text",
    [
        "I do not have specific information.",
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


def test_a_long_answer_that_thanks_the_user_is_not_a_pleasantry():
    text = "You're welcome. " + "The form APP-001 explains the appeal procedure step by step. " * 6
    assert decline_verdict(text) == "answers"
