"""RB_llm / RL_F without an LLM call: the fitted reference rating, its fit on the tuning half, the harness."""

from __future__ import annotations

import hashlib
import json

import pytest

from mtrag_graph.cli import main as cli
from mtrag_graph.judging.answer_judge import AnswerScore
from mtrag_graph.measure.evaluation.fitted import ReferenceRating, load_reference_rating, main, training_rows
from mtrag_graph.measure.evaluation.golden import load_golden
from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.measure.evaluation.runner import Scorers, score_item, score_items
from tests.conftest import mtrag_data_path
from tests.measure.evaluation.conftest import GOLDEN


def test_rating_is_linear_clipped_and_missing_when_a_feature_is():
    rating = ReferenceRating({"bert_rec": 0.5, "faithfulness": 0.25}, bias=0.1)
    assert rating({"bert_rec": 0.8, "faithfulness": 0.4}) == pytest.approx(0.1 + 0.4 + 0.1)
    assert rating({"bert_rec": 3.0, "faithfulness": 3.0}) == 1.0
    assert rating({"bert_rec": 0.8}) is None
    with pytest.raises(ValueError, match="weights must name"):
        ReferenceRating({"length": 1.0}, bias=0.0)


def test_shipped_model_loads_with_its_card():
    rating = load_reference_rating()
    assert set(rating.weights) == {"bert_rec", "faithfulness"} and rating.card["version"]
    assert "tune" in rating.card["split"]


class _Bert:
    name = "fake-bert"

    def recall(self, response, target):
        return 0.6

    def k_precision(self, response, passages):
        return 0.5


class _AnswerJudge:
    name = "fake-answer-judge"

    def score(self, question, passages, answers):
        return [AnswerScore(faithfulness=0.9, preference=0.0, declines=False)]


def _item(answerability="ANSWERABLE", response="Paris is the capital."):
    return EvalItem(
        task_id="t::1",
        line=1,
        answerability=answerability,
        domain=None,
        history=[],
        question="What is the capital of France?",
        passages=["Paris is the capital of France."],
        target="The capital of France is Paris.",
        response=response,
    )


HALF_AND_HALF = ReferenceRating({"bert_rec": 0.5, "faithfulness": 0.5}, bias=0.0)


def _fitted(metrics, bert=None, answer_judge=None):
    """Scorers with the fitted ratings over fakes (BERTScore recall 0.6, faithfulness 0.9)."""
    return Scorers(
        metrics=metrics,
        bert=bert or _Bert(),
        answer_judge=answer_judge or _AnswerJudge(),
        idk_method="pattern",
        ratings="fitted",
        reference_rating=HALF_AND_HALF,
    )


def test_fitted_ratings_need_no_judge_and_pull_in_what_they_are_computed_from():
    scorers = _fitted(("rouge", "rb_llm", "rl_f", "idk"))
    assert scorers.metrics == ("rouge", "bert", "rb_llm", "rl_f", "idk", "faithfulness")
    assert scorers.llm_metrics == set() and scorers.provenance["ratings"] == HALF_AND_HALF.name
    row = score_item(_item(), scorers)  # judge=None: any LLM call would raise
    assert row["scores"]["rb_llm"] == pytest.approx(0.75) and row["scores"]["rl_f"] == 0.9
    assert row["conditioned"]["rl_f"] == 0.9
    declined = score_item(_item(response="I don't know the answer based on the documents."), scorers)
    assert declined["conditioned"]["rb_llm"] == 0.0  # an answerable turn declined scores 0


def _harness(path, responses, feature_of):
    with open(path, "w", encoding="utf-8") as handle:
        for response in responses:
            handle.write(json.dumps({"task_id": response.key, "scores": feature_of(response)}) + "\n")
    return path


def test_fit_reads_only_the_tuning_half(tmp_path):
    golden = mtrag_data_path(GOLDEN)
    responses = load_golden(golden)

    def features(response):
        if response.split == "report":  # wild values: a fit that read them would change
            return {"bert_rec": 5.0, "faithfulness": -5.0}
        official = response.official.get("rb_llm") or 0.5
        return {"bert_rec": official, "faithfulness": 1 - official}

    harness = _harness(tmp_path / "scores.jsonl", responses, features)
    rows, targets, keys = training_rows(golden, harness)
    assert rows and all(k.split("/")[0] and r["bert_rec"] <= 1 for k, r in zip(keys, rows, strict=True))
    assert len(rows) == len(
        [r for r in responses if r.split == "tune" and r.official.get("rb_llm") is not None]
    )
    assert main([str(golden), str(harness), "-o", str(tmp_path / "model.json")]) == 0
    model = load_reference_rating(tmp_path / "model.json")
    # the target is bert_rec itself: its weight is positive, the other's negative (they are opposites)
    assert model.weights["bert_rec"] > 0 > model.weights["faithfulness"]
    assert model.card["responses"] == len(rows)

    assert model.card["command"].startswith(
        "python -m mtrag_graph.measure.evaluation.fitted GOLDEN HARNESS -o"
    )
    assert model.card["data_sha256"] == hashlib.sha256(golden.read_bytes()).hexdigest()
    assert model.card["harness_sha256"] == hashlib.sha256(harness.read_bytes()).hexdigest()
    assert "conversation" in model.card["split"] and model.card["trained"][:2] == "20"
    assert model.card["scores_in_sample"]["rho_vs_official_rb_llm"] > 0.9  # the target is bert_rec


@pytest.mark.slow  # BERTScore with the bundled MiniLM
def test_the_real_harness_rates_a_supported_answer_above_an_unsupported_one(tmp_path):
    """Real path: bundled MiniLM BERTScore and the shipped answer judge, through the CLI."""
    rows = []
    for task_id, answer in (
        ("a::1", "Paris is the capital of France."),
        ("b::1", "Berlin is the capital of Germany and has four million people."),
    ):
        rows.append(
            {
                "task_id": task_id,
                "input": [{"speaker": "user", "text": "What is the capital of France?"}],
                "contexts": [{"document_id": "d1", "text": "Paris is the capital of France."}],
                "targets": [{"speaker": "agent", "text": "The capital of France is Paris."}],
                "answerability": ["ANSWERABLE"],
                "predictions": [{"text": answer}],
            }
        )
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "r"
    args = [
        "evaluate",
        str(preds),
        "-o",
        str(out),
        "--metrics",
        "rouge,idk,rb_llm,rl_f",
        "--ratings",
        "fitted",
    ]
    assert cli([*args, "--no-progress", "--no-embedding-cache"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["judge"] is None and report["config"]["ratings"].startswith("fitted")
    assert any("fitted" in w for w in report["warnings"])
    scores = {
        json.loads(line)["task_id"]: json.loads(line)["scores"] for line in (out / "scores.jsonl").open()
    }
    assert scores["a::1"]["rl_f"] > scores["b::1"]["rl_f"]
    assert scores["a::1"]["rb_llm"] > scores["b::1"]["rb_llm"]
    assert report["overall"]["hm3"] is not None


def test_rows_scored_before_are_completed_with_the_fitted_ratings_not_rescored(tmp_path):
    plain = Scorers(
        metrics=("rouge", "bert", "idk", "faithfulness"),
        bert=_Bert(),
        answer_judge=_AnswerJudge(),
        idk_method="pattern",
    )
    score_items([_item()], plain, tmp_path, progress=False)

    class _RefusingJudge(_AnswerJudge):
        def score(self, *args):
            raise AssertionError("recomputed faithfulness")

    class _RefusingBert(_Bert):
        def recall(self, *args):
            raise AssertionError("recomputed BERTScore")

    fitted = _fitted(
        ("rouge", "bert", "idk", "faithfulness", "rb_llm", "rl_f"), _RefusingBert(), _RefusingJudge()
    )
    [row] = score_items([_item()], fitted, tmp_path, progress=False)
    assert row["scores"]["rb_llm"] == pytest.approx(0.75) and row["conditioned"]["rl_f"] == 0.9
    assert row["completed_from_stored"] and row["ratings"] == HALF_AND_HALF.name
    [again] = score_items([_item()], fitted, tmp_path, progress=False)  # now stored whole: reused as is
    assert again["reused"] and again["scores"]["rb_llm"] == pytest.approx(0.75)
    other_encoder = _fitted(fitted.metrics, bert=type("B", (_Bert,), {"name": "other-bert"})())
    [rescored] = score_items([_item()], other_encoder, tmp_path, progress=False)
    assert not rescored.get("completed_from_stored") and not rescored.get("reused")
