"""``mtrag-graph evaluate --fidelity``: the tables, resuming, the IDK agreement, the candidate judge."""

from __future__ import annotations

import json

import pytest

from mtrag_graph.cli import main
from mtrag_graph.measure.evaluation.fidelity import build_fidelity
from mtrag_graph.measure.evaluation.golden import load_golden

PASSAGE = "Paris is the capital of France. It lies on the Seine river and has two million people."
# per task: (response, human faithfulness, human win-rate, official rl_f, official conditional_idk)
TASKS = {
    "t<::>1": [
        ("Paris is the capital of France.", 4, 100, 1.0, 1),
        ("The capital is Lyon, a city of bananas.", 1, 0, 0.0, 1),
        ("I do not have specific information.", 2, 50, 0.0, 0),
    ],
    "t<::>2": [
        ("It lies on the Seine river.", 4, 50, 0.9, 1),
        ("It lies on the Seine, with two million people.", 3, 100, 0.5, 1),
        ("It lies on the Thames, near London bridges.", 1, 0, 0.1, 1),
    ],
}


def golden_file(tmp_path):
    evaluations = []
    for task_id, responses in TASKS.items():
        for n, (text, faith, win, rl_f, idk) in enumerate(responses):
            annotations = {
                name: {"a": {"value": str(faith)}}
                for name in ("faithfulness", "completeness", "appropriateness")
            }
            annotations["naturalness"] = {"a": {"value": "4"}}
            annotations["win-rate"] = {"a": {"value": win}}
            annotations.update({m: {"system": {"value": 0.5}} for m in ("RougeL", "Bert-Rec", "Bert-KPrec")})
            annotations.update({m: {"composite": {"value": rl_f}} for m in ("rl_f", "rb_llm", "rb_agg")})
            annotations["conditional_idk"] = {"composite": {"value": idk}}
            evaluations.append(
                {"task_id": task_id, "model_id": f"m{n}", "model_response": text, "annotations": annotations}
            )
    tasks = [
        {
            "task_id": task_id,
            "input": [{"speaker": "user", "text": "Tell me about Paris."}],
            "contexts": [{"document_id": "d1"}],
            "targets": [{"speaker": "agent", "text": "Paris is the capital of France, on the Seine."}],
            "Answerability": ["ANSWERABLE"],
            "Collection": "mt-rag-clapnq-elser-512-100-20240503",
        }
        for task_id in TASKS
    ]
    path = tmp_path / "golden.json"
    path.write_text(json.dumps({"documents": [{"document_id": "d1", "text": PASSAGE}], "tasks": tasks,
                                "evaluations": evaluations}))  # fmt: skip
    return path


def _fidelity(tmp_path, *extra):
    out = tmp_path / "fidelity"
    args = ["evaluate", "--fidelity", str(golden_file(tmp_path)), "-o", str(out), "--no-progress", *extra]
    assert main(args) == 0
    return json.loads((out / "fidelity.json").read_text()), out


def test_official_values_are_compared_with_people_per_split(tmp_path):
    report, out = _fidelity(tmp_path, "--metrics", "rouge,idk", "--candidate-judges", "none")
    whole = report["agreement"]["all"]["official rl_f"]
    # pairs: t1 (1.0,100)>(0.0,0) agree, (1.0,100)>(0.0,50) agree, (0.0,0)~(0.0,50) metric tie;
    # t2 (0.9,50)<(0.5,100) disagree, (0.9,50)>(0.1,0) agree, (0.5,100)>(0.1,0) agree -> 4 of 5
    assert (whole["pairwise"], whole["pairs"]) == (pytest.approx(0.8), 5)
    assert whole["top1"] == 0.5  # t1 right, t2 wrong
    assert "ROUGE-L" in report["agreement"]["all"]
    assert sum(report["split_sizes"][s] for s in ("tune", "report")) == report["split_sizes"]["all"] == 2
    assert "official rl_f" in (out / "fidelity.md").read_text()


def test_idk_verdicts_are_scored_against_the_official_ones(tmp_path):
    report, _ = _fidelity(tmp_path, "--metrics", "idk", "--candidate-judges", "none")
    pattern = report["idk"]["pattern (text.declines)"]["all"]
    assert (pattern["n"], pattern["positives"], pattern["accuracy"], pattern["kappa"]) == (6, 1, 1.0, 1.0)
    assert list(report["idk"]) == ["pattern (text.declines)"]  # the harness used the same detector


def test_the_llm_idk_judge_is_scored_beside_the_detector(tmp_path):
    judge = "scripted:" + "|".join(["answers", "answers", "declines", "answers", "declines", "answers"])
    report, _ = _fidelity(
        tmp_path, "--metrics", "idk", "--idk-method", "judge", "--judge", judge, "--no-judge-cache",
        "--candidate-judges", "none",
    )  # fmt: skip
    llm = report["idk"]["harness idk (judge)"]["all"]
    # one true positive (t1/m2), one false positive (t2/m1): p_o = 5/6, p_e = 2/6*1/6 + 4/6*5/6
    assert llm["accuracy"] == pytest.approx(5 / 6)
    assert llm["kappa"] == pytest.approx((5 / 6 - 22 / 36) / (1 - 22 / 36))


def test_a_second_run_reuses_the_stored_rows(tmp_path):
    _fidelity(tmp_path, "--metrics", "rouge", "--candidate-judges", "none")
    report, out = _fidelity(tmp_path, "--metrics", "rouge", "--candidate-judges", "none")
    assert len((out / "harness" / "scores.jsonl").read_text().splitlines()) == 6
    assert report["seconds"] == {}  # nothing was recomputed


def test_limit_keeps_the_first_tasks(tmp_path):
    report, _ = _fidelity(tmp_path, "--metrics", "rouge", "--candidate-judges", "none", "--limit", "1")
    assert report["tasks"] == 1 and report["responses"] == 3


def test_an_unknown_candidate_judge_is_an_error(tmp_path, capsys):
    args = [
        "evaluate",
        "--fidelity",
        str(golden_file(tmp_path)),
        "-o",
        str(tmp_path / "o"),
        "--candidate-judges",
        "x",
    ]
    assert main(args) == 2
    assert "unknown candidate judges" in capsys.readouterr().err


def test_candidate_judge_rows_enter_the_tables(tmp_path):
    responses = load_golden(golden_file(tmp_path))
    merged: dict = {}
    for r in responses:
        merged.setdefault(r.task_id, {"scores": {}})["scores"][r.key] = float(r.human["faithfulness"])
    report = build_fidelity(responses, {}, {"fake": merged}, {})
    row = report["agreement"]["all"]["candidate judge: fake"]
    assert row["rho_faithfulness"] == pytest.approx(1.0)


@pytest.mark.slow
def test_the_answer_judge_picks_one_response_per_task_through_the_graph_node(tmp_path):
    report, out = _fidelity(tmp_path, "--metrics", "faithfulness")
    rows = [json.loads(line) for line in (out / "candidate_judge.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == list(TASKS)
    assert rows[0]["chosen"] == "t<::>1/m0"  # the supported answer, not the unsupported or the decline
    name = next(k for k in report["agreement"]["all"] if k.startswith("candidate judge: answer-judge"))
    assert report["agreement"]["all"][name]["tasks"] == 2
    assert any(k.startswith("candidate judge") and k.endswith("(per task)") for k in report["seconds"])
    assert report["agreement"]["all"]["faithfulness (answer judge)"]["responses"] == 6


def test_the_share_of_cited_sentences_is_compared_with_the_human_faithfulness(tmp_path):
    report, _ = _fidelity(tmp_path, "--metrics", "citations", "--candidate-judges", "none")
    whole = report["agreement"]["all"]["cited sentences (citations)"]
    # the responses the passage does not hold (Lyon and bananas, the Thames) cite nothing and were rated low;
    # "I do not have specific information." makes no claim (it says what is missing), so it has no share
    assert whole["rho_faithfulness"] > 0.5 and whole["responses"] == 5
