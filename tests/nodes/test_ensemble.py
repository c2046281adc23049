"""The answer ensemble: candidate fan-out, failures, the judge's scoring, shuffle and fallbacks."""

from __future__ import annotations

import json
import re
import threading

import pytest

from mtrag_graph.context import Context
from mtrag_graph.graph import Insertion, build_graph
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.nodes.judge_candidates import lexical_support, shown_order
from mtrag_graph.stages.candidates import Candidate, load_candidates
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close.",
]
TASK = make_task(["How do bees find flowers?"], PASSAGES)
GOOD = "Bees use the waggle dance to show the direction of flowers."
GRAPH = build_graph(output="state")

_SHOWN = re.compile(r"Candidate ([A-Z]):\n(.*?)(?=\n\nCandidate [A-Z]:|\n\nJudge each)", re.DOTALL)


def shown_candidates(messages) -> list[tuple[str, str]]:
    return _SHOWN.findall(str(messages[-1].content))


def judge_responder(rate):
    """A judge fake: ``rate(text) -> (claims, supported, completeness, declines)`` for each shown answer."""

    def respond(messages, options):
        verdicts = []
        for label, text in shown_candidates(messages):
            claims, supported, completeness, declines = rate(text)
            verdicts.append(
                {"label": label, "claims": claims, "supported": supported,
                 "completeness": completeness, "declines": declines}
            )  # fmt: skip
        return json.dumps({"verdicts": verdicts})

    return respond


def same_rating(text):
    return 2, 2, 4, False


def ensemble_context(answers: list, judge=None, **overrides) -> Context:
    """Candidates that each answer one scripted reply (an exception instance fails that candidate)."""
    candidates = [
        Candidate(model=ScriptedChatModel(responses=[a], model_name=f"m{i}"), variant=v, name=f"c{i}")
        for i, (a, v) in enumerate(
            zip(answers, ["extractive", "fewshot", "default", "citation"], strict=False)
        )
    ]
    judge_model = judge if judge is not None else ScriptedChatModel(responder=judge_responder(same_rating))
    overrides.setdefault("judge_method", "llm")  # these tests drive the judge model's verdicts
    return fake_context(candidates=tuple(candidates), judge_model=judge_model, **overrides)


def run(context, task=TASK):
    return GRAPH.invoke({"task": task}, context=context)


def test_every_candidate_is_asked_once_and_the_judge_once():
    context = ensemble_context([GOOD, "Bees dance to show where the flowers are.", "They dance."])
    state = run(context)
    assert sorted(e["index"] for e in state["candidate_answers"]) == [0, 1, 2]
    assert all(len(c.model.calls) == 1 for c in context.candidates)
    assert len(context.judge_model.calls) == 1
    assert context.generate_model.calls == []
    assert state["answer"] and state["abstain_reason"] is None
    assert {s["index"] for s in state["judgement"]["scores"]} == {0, 1, 2}


def test_candidate_prompts_share_the_gate_prefix():
    context = ensemble_context([GOOD, GOOD])
    run(context)
    shared = str(context.gate_model.calls[0]["messages"][-1].content).split("Question:")[0]
    for candidate in context.candidates:
        assert str(candidate.model.calls[0]["messages"][-1].content).startswith(shared)
    assert str(context.judge_model.calls[0]["messages"][-1].content).startswith(shared)


def test_a_failing_candidate_is_recorded_and_the_others_are_judged():
    context = ensemble_context([ValueError("model crashed"), GOOD, "Bees dance to show where flowers are."])
    state = run(context)
    failed = [e for e in state["candidate_answers"] if e["error"]]
    assert [e["index"] for e in failed] == [0] and "model crashed" in failed[0]["error"]
    assert state["judgement"]["failed"] == {0: failed[0]["error"]}
    assert {s["index"] for s in state["judgement"]["scores"]} == {1, 2}
    assert state["abstain_reason"] is None and state["chosen_candidate"] in (1, 2)


def test_an_empty_reply_counts_as_a_failed_candidate():
    context = ensemble_context(["   ", GOOD])
    state = run(context)
    assert state["candidate_answers"][0]["error"] or state["candidate_answers"][1]["error"]
    assert state["judgement"]["judge"] == "skipped" and state["chosen_candidate"] == 1
    assert context.judge_model.calls == []


def test_all_candidates_failing_abstains_with_the_reason():
    context = ensemble_context([ValueError("a"), TimeoutError("b")])
    state = run(context)
    assert state["abstain_reason"] == "error"
    assert state["answer"] == context.idk_answer
    assert "all 2 candidates failed" in state["judgement"]["reason"]
    assert context.judge_model.calls == []


def test_equal_scores_go_to_the_prior_order():
    for n in range(5):  # whatever order the judge sees them in (shuffled per task)
        context = ensemble_context([GOOD, GOOD, GOOD])
        state = run(context, {**TASK, "task_id": f"t{n}<::>1"})
        assert state["chosen_candidate"] == 0
        assert "tie" in state["judgement"]["reason"]


def test_the_best_scored_candidate_wins_over_the_prior_order():
    better = "Bees show the direction of flowers with the waggle dance."

    def rate(text):
        return (2, 2, 5, False) if text == better else (2, 1, 3, False)

    context = ensemble_context([GOOD, better], judge=ScriptedChatModel(responder=judge_responder(rate)))
    state = run(context)
    assert state["chosen_candidate"] == 1 and state["answer"] == better
    assert state["judgement"]["reason"].startswith("c1 scored")


def test_a_declining_candidate_loses_when_the_gate_said_yes():
    context = ensemble_context(
        [context_idk := "I don't know the answer based on the provided documents.", GOOD]
    )
    state = run(context)
    scores = {s["index"]: s for s in state["judgement"]["scores"]}
    assert scores[0]["declined"] is True and scores[1]["declined"] is False
    assert state["chosen_candidate"] == 1 and state["answer"] != context_idk


def test_the_shuffle_is_fixed_per_task_and_varies_across_tasks():
    entries = [{"index": i} for i in range(4)]
    first = [e["index"] for e in shown_order(entries, "t<::>1")]
    assert first == [e["index"] for e in shown_order(entries, "t<::>1")]
    orders = {tuple(e["index"] for e in shown_order(entries, f"t{n}<::>1")) for n in range(10)}
    assert len(orders) > 1


def test_the_judge_sees_anonymised_candidates_in_the_shuffled_order():
    context = ensemble_context(["Bees dance the waggle dance.", "Flowers are shown by the waggle dance."])
    state = run(context)
    prompt = str(context.judge_model.calls[0]["messages"][-1].content)
    assert "m0" not in prompt and "c1" not in prompt and "extractive" not in prompt
    shown = [text for _, text in shown_candidates(context.judge_model.calls[0]["messages"])]
    by_index = {e["index"]: e["text"] for e in state["candidate_answers"]}
    assert shown == [by_index[i] for i in state["judgement"]["shown_order"]]
    assert "Length is not merit" in prompt


def test_a_padded_duplicate_does_not_win_even_against_a_length_biased_judge():
    padded = (
        GOOD + " It is also worth noting that many further considerations should always be kept in mind, "
        "and that circumstances vary considerably from one situation to another."
    )

    def length_biased(text):  # same claims supported, more "complete" because longer
        return (2, 2, 5, False) if len(text) > len(GOOD) else (2, 2, 4, False)

    for answers in ([padded, GOOD], [GOOD, padded]):  # in either prior position
        context = ensemble_context(answers, judge=ScriptedChatModel(responder=judge_responder(length_biased)))
        state = run(context)
        assert state["answer"] == GOOD


def test_lexical_support_counts_sentences_backed_by_the_passages():
    passages = [{"text": t} for t in PASSAGES]
    assert lexical_support(GOOD, passages) == 1.0
    assert lexical_support(GOOD + " Penguins migrate across Antarctica every winter.", passages) == 0.5


@pytest.mark.parametrize("reply", ["not json at all", '{"verdicts": [{"label": "A", "claims": 1}]}'])
def test_a_judge_reply_that_never_validates_falls_back_to_the_prior_order(reply):
    judge = ScriptedChatModel(responses=[reply])
    context = ensemble_context(["Bees dance the waggle dance.", GOOD], judge=judge)
    state = run(context)
    assert len(judge.calls) == context.parse_retries + 1
    assert state["chosen_candidate"] == 0 and state["judgement"]["judge"] == "prior_order"
    assert any(f["node"] == "judge_candidates" and f["used"] == "prior_order" for f in state["fallbacks"])


def test_a_judge_that_misses_a_candidate_falls_back_to_the_prior_order():
    missing = json.dumps({"verdicts": [{"label": "A", "claims": 1, "supported": 1, "completeness": 5,
                                        "declines": False}]})  # fmt: skip
    context = ensemble_context(
        ["Bees dance the waggle dance.", GOOD], judge=ScriptedChatModel(responses=[missing])
    )
    state = run(context)
    assert state["judgement"]["judge"] == "prior_order" and state["chosen_candidate"] == 0


def test_a_bad_chosen_answer_is_retried_with_the_chosen_candidates_model():
    context = ensemble_context(["Bees find flowers.", "Bees find flowers."])
    retry_model = context.candidates[0].model
    retry_model.responses = ["Bees find flowers.", "Bees perform the waggle dance to show direction."]
    state = run(context)
    assert state["retries"] == 1
    assert state["answer"] == "Bees perform the waggle dance to show direction."
    assert "previous answer was rejected" in str(retry_model.calls[1]["messages"][-1].content)


def test_one_configured_candidate_skips_the_fan_out_and_the_judge():
    model = ScriptedChatModel(responses=[GOOD])
    judge = ScriptedChatModel(responses=["{}"])
    context = fake_context(candidates=(Candidate(model=model, variant="extractive"),), judge_model=judge)
    state = run(context)
    assert state["answer"] == GOOD
    assert not state.get("candidate_answers") and judge.calls == []
    assert "Answering rules" in str(model.calls[0]["messages"][-1].content)
    assert context.generate_model.calls == []


def test_candidates_run_concurrently():
    barrier = threading.Barrier(2, timeout=5)

    def meet(messages, options):
        barrier.wait()  # only returns when both candidates are in a call at once
        return GOOD

    context = ensemble_context([GOOD, GOOD])
    context.candidates = tuple(
        Candidate(model=ScriptedChatModel(responder=meet), name=f"c{i}") for i in range(2)
    )
    state = run(context)
    assert all(e["error"] is None for e in state["candidate_answers"])


def test_the_citation_variant_s_markers_are_stripped():
    cited = "Bees use the waggle dance to show the direction of flowers [Passage 1]."
    model = ScriptedChatModel(responses=[cited])
    assert run(fake_context(candidates=(Candidate(model=model, variant="citation"),)))["answer"] == GOOD


def test_fewshot_prompt_holds_the_four_shipped_exemplars():
    model = ScriptedChatModel(responses=[GOOD])
    run(fake_context(candidates=(Candidate(model=model, variant="fewshot"),)))
    prompt = str(model.calls[0]["messages"][-1].content)
    assert prompt.count("### Example") == 4
    assert len(prompt.split("Examples of good answers")[1].split()) < 600  # a few hundred tokens
    assert prompt.rstrip().endswith("Question: How do bees find flowers?\nAnswer:")


def test_bundled_preset_is_the_two_local_models_times_two_variants():
    candidates = load_candidates("ensemble-local")
    assert {(c.model, c.variant) for c in candidates} == {
        (m, v) for m in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b") for v in ("extractive", "fewshot")
    }
    assert Context(candidates="ensemble-local").candidates == candidates
    assert Context().candidates == ()


def test_unknown_preset_and_variant_are_reported():
    with pytest.raises(ValueError, match="unknown candidate preset 'nope'"):
        load_candidates("nope")
    with pytest.raises(ValueError, match="unknown prompt variant"):
        Candidate(model="scripted:x", variant="poetic")


def test_a_node_cannot_be_inserted_before_the_candidate_branches():
    with pytest.raises(ValueError, match="started by Send"):
        insertion = Insertion("x", lambda s, r: {}, after="answerability_gate", before="generate_candidate")
        build_graph(insert=[insertion], output="state")


@pytest.mark.slow
def test_the_answer_judge_picks_the_supported_candidate_without_a_model_call():
    context = ensemble_context(
        ["Bananas grow quickly in warm countries overseas.", "I don't know.", GOOD],
        judge_method="answer",
    )
    state = run(context)
    judgement = state["judgement"]
    assert context.judge_model.calls == []
    assert judgement["judge"].startswith("answer-judge")
    assert {s["index"] for s in judgement["scores"]} == {0, 1, 2}
    assert [s["declined"] for s in sorted(judgement["scores"], key=lambda s: s["index"])] == [
        False,
        True,
        False,
    ]
    assert state["chosen_candidate"] == 2 and state["answer"] == GOOD
