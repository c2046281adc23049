"""The answer judge's fitting command: run on a small golden file, it writes a judge with its data card."""

from __future__ import annotations

import hashlib
import json

from mtrag_graph.judging import load_answer_judge
from mtrag_graph.measure.evaluation.golden import conversation_of, split_of
from research.fit_answer_judge import main
from tests.conftest import mtrag_data_path
from tests.measure.evaluation.conftest import GOLDEN


def test_a_small_answer_judge_is_rebuilt_from_its_card_command(tmp_path, monkeypatch):
    """The card's command, run on a small golden file (two tuning conversations, one report one)."""
    monkeypatch.setenv("MTRAG_GRAPH_CACHE", str(tmp_path / "cache"))  # the sentence-vector cache
    data = json.loads(mtrag_data_path(GOLDEN).read_text(encoding="utf-8"))
    conversations = {"tune": [], "report": []}
    for t in data["tasks"]:
        conversation = conversation_of(t["task_id"])
        chosen = conversations[split_of(t["task_id"])]
        if conversation not in chosen:
            chosen.append(conversation)
    keep_conversations = set(conversations["tune"][:2] + conversations["report"][:1])
    tasks = [t for t in data["tasks"] if conversation_of(t["task_id"]) in keep_conversations][:14]
    kept = {t["task_id"] for t in tasks}
    small = {**data, "tasks": tasks, "evaluations": [e for e in data["evaluations"] if e["task_id"] in kept]}
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps(small))
    out = tmp_path / "judge.json"
    assert main([str(golden), "-o", str(out), "--embedder", "hashing:64"]) == 0
    card = json.loads(out.read_text())["card"]
    tune_tasks = [t for t in kept if split_of(t) == "tune"]
    assert card["command"] == f"python -m research.fit_answer_judge GOLDEN -o {out} --embedder hashing:64"
    assert card["data_sha256"] == hashlib.sha256(golden.read_bytes()).hexdigest()
    assert card["split"].startswith("tune") and "conversation" in card["split"]
    assert card["tasks"] == len(tune_tasks) and card["responses"] == 3 * len(tune_tasks)
    assert 0 < len(tune_tasks) < len(kept)  # the report conversation was left out
    assert set(card["scores_in_sample"]) == {
        "faithfulness_rho_vs_human_faithfulness",
        "preference_pairwise_vs_human_win_rate",
        "preference_top1",
    }
    assert card["trained"][:2] == "20" and card["version"].startswith("answer-judge")
    assert load_answer_judge(out).embedder_spec == "hashing:64"
