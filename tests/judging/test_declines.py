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


def test_the_threshold_scan_scores_each_remark_length_against_the_official_verdict():
    """benchmarks/refusal_threshold.py: a refusal with a 25-word remark that people called a decline is
    right under REMARK_WORDS 30, wrong under 20."""
    import importlib.util
    from pathlib import Path

    from mtrag_graph.evaluation.golden import GoldenResponse
    from mtrag_graph.evaluation.inputs import EvalItem

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "refusal_threshold.py"
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
