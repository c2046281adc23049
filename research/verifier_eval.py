"""The answer verifier's figures, with the shipped weights (``mtrag_graph/data/verifier/``):

1. the held-out pairs of ``research.verifier_data`` (conversations never trained on): AUC, accuracy;
2. the real use case, a recorded run of the graph on the real-documents tuning split (its predictions and
   the scorer's verdicts): the best score over (rewritten question, each kept passage) and over the cited
   passages only, for right answers against invented ones and unanswerable questions; for each number k
   of invented answers declined, the right answers the same threshold loses;
3. the MTRAG-UN dev slice (report only, not tuned on): ANSWERABLE (and PARTIAL) turns with their reference
   passages against UNANSWERABLE turns with the top BM25 passages of their domain's mini corpus (they
   have no reference passages), last user turn as the question for all.

    OMP_NUM_THREADS=1 python -m research.verifier_eval --data $MTRAG_DATA \
        --run /work/main/runs/rd-tuning-A -o runs/verifier-eval.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.judging.verifier import WEIGHTS, Verifier, passage_windows
from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.tasks import answerability_of, domain_of
from research.verifier_data import Corpus, build_pairs, last_user_turn
from research.verifier_fit import auc, held_out_figures

THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
RETRIEVED = 3  # BM25 passages for an MTRAG-UN UNANSWERABLE turn
# the verifier's best score over the kept passages, over the cited ones; and, for comparison, the score
# the run's gate classifier gave (model-free evidence: MiniLM cosine, word overlap)
BASES = ("kept", "cited", "gate")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def best_scores(verifier: Verifier, items: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
    """For each (question, passages): the best window score (each distinct pair scored once)."""
    windows = [
        [(question, w) for text in passages for w in passage_windows(text)] for question, passages in items
    ]
    distinct = list(dict.fromkeys(pair for pairs in windows for pair in pairs))
    scored = dict(zip(distinct, verifier.pair_scores(distinct), strict=True))
    return [max((scored[pair] for pair in pairs), default=0.0) for pairs in windows]


def outcome(verdict: dict[str, Any]) -> str:
    if verdict["right"]:
        return "right"
    if verdict["invented"]:
        return "invented" if verdict["answerable"] else "invented_unanswerable"
    if verdict["idk"]:
        return "declined" if verdict["answerable"] else "declined_unanswerable"
    return "wrong"


def run_figures(verifier: Verifier, run: Path) -> dict[str, Any]:
    verdicts = {v["task_id"]: v for v in read_jsonl(run / "verdicts.jsonl")}
    rows = []
    for prediction in read_jsonl(run / "predictions.jsonl"):
        verdict = verdicts[prediction["task_id"]]
        route = prediction.get("route") or {}
        question = route.get("standalone_question") or last_user_turn(prediction)
        contexts = prediction.get("contexts") or []
        cited_ids = {
            d
            for c in (prediction["predictions"][0].get("citations") or [])
            for d in c.get("document_ids", [])
        }
        evidence = route.get("gate_evidence") or {}
        rows.append({"task_id": prediction["task_id"], "outcome": outcome(verdict), "question": question,
                     "score_gate": evidence.get("score", 0.0),
                     "kept": [c["text"] for c in contexts],
                     "cited": [c["text"] for c in contexts if c["document_id"] in cited_ids]})  # fmt: skip
    kept = best_scores(verifier, [(r["question"], r["kept"]) for r in rows])
    cited = best_scores(verifier, [(r["question"], r["cited"]) for r in rows])
    for r, k, c in zip(rows, kept, cited, strict=True):
        r["score_kept"], r["score_cited"] = round(k, 4), round(c, 4)
        del r["kept"], r["cited"]
    return {
        "rows": rows,
        **{f"by_{which}": separation(rows, f"score_{which}") for which in BASES},
    }


def separation(rows: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """Right answers against invented answers (answerable and unanswerable questions alike): AUC, and the
    right answers a threshold loses when it declines k invented ones."""
    right = sorted(r[key] for r in rows if r["outcome"] == "right")
    invented = sorted(r[key] for r in rows if r["outcome"].startswith("invented"))
    unanswerable_answered = sorted(r[key] for r in rows if r["outcome"] == "invented_unanswerable")
    labels = [1] * len(right) + [0] * len(invented)
    lost_at_k = []
    for k in range(1, len(invented) + 1):
        threshold = invented[k - 1] + 1e-6  # declines every answer scoring below it
        lost_at_k.append(
            {"k": k, "threshold": round(threshold, 4), "right_lost": sum(s < threshold for s in right)}
        )
    at = [{"threshold": t, "right_lost": sum(s < t for s in right), "invented_declined": sum(s < t for s in invented),
           "unanswerable_declined": sum(s < t for s in unanswerable_answered)} for t in THRESHOLDS]  # fmt: skip
    return {"right": len(right), "invented": len(invented), "auc_right_vs_invented": round(auc(labels, right + invented), 4),
            "lost_at_k": lost_at_k, "at_threshold": at}  # fmt: skip


def mtragun_figures(verifier: Verifier, data: Path) -> dict[str, Any]:
    tasks = load_split(data, "report")
    corpora: dict[str, Corpus] = {}
    items, groups = [], []
    for task in tasks:
        label = answerability_of(task)
        question = last_user_turn(task)
        if label in ("ANSWERABLE", "PARTIAL") and task["contexts"]:
            items.append((question, [c["text"] for c in task["contexts"]]))
        elif label == "UNANSWERABLE":
            domain = domain_of(task.get("Collection")) or "unknown"
            if domain not in corpora:
                corpora[domain] = Corpus(data / "corpora" / "mini" / f"{domain}.jsonl")
            items.append((question, [r["text"] for r in corpora[domain].search(question, RETRIEVED)]))
        else:
            continue
        groups.append(label)
    scores = best_scores(verifier, items)
    by = {
        g: [s for s, h in zip(scores, groups, strict=True) if h == g]
        for g in ("ANSWERABLE", "PARTIAL", "UNANSWERABLE")
    }
    at = [
        {"threshold": t, **{f"{g.lower()}_below": sum(s < t for s in v) for g, v in by.items()}}
        for t in THRESHOLDS
    ]
    return {"counts": {g: len(v) for g, v in by.items()},
            "auc_answerable_vs_unanswerable": round(auc([1] * len(by["ANSWERABLE"]) + [0] * len(by["UNANSWERABLE"]),
                                                        by["ANSWERABLE"] + by["UNANSWERABLE"]), 4),
            "at_threshold": at}  # fmt: skip


def held_out(verifier: Verifier, data: Path, seed: int, threshold: float) -> dict[str, Any]:
    pairs = [p for p in build_pairs(data, seed) if p["split"] == "held-out"]
    scores = verifier.pair_scores([(p["question"], p["passage"]) for p in pairs])
    return held_out_figures(pairs, scores, threshold)


def tables(result: dict[str, Any]) -> str:
    h = result["held_out"]
    lines = ["## Held-out MTRAG pairs", "", "| pairs | AUC | accuracy | positive | answer_removed | other_passage "
             "| unanswerable | AUC pos vs answer_removed | vs other_passage | vs unanswerable |", "|---" * 11 + "|",
             f"| {h['pairs']} | {h['auc']} | {h['accuracy']} (t={h['threshold']}) | {h['accuracy_positive']} "
             f"| {h['accuracy_answer_removed']} | {h['accuracy_other_passage']} | {h['accuracy_unanswerable']} "
             f"| {h['auc_positive_vs_answer_removed']} | {h['auc_positive_vs_other_passage']} "
             f"| {h['auc_positive_vs_unanswerable']} |"]  # fmt: skip
    for which in BASES:
        s = result["run"][f"by_{which}"]
        what = (
            "the gate's evidence score (comparison)"
            if which == "gate"
            else f"best score over {which} passages"
        )
        lines += ["", f"## Recorded run, {what}: {s['right']} right, {s['invented']} invented, "
                  f"AUC {s['auc_right_vs_invented']}", "",
                  "| invented declined (k) | threshold | right lost |", "|---|---|---|"]  # fmt: skip
        lines += [f"| {x['k']} | {x['threshold']} | {x['right_lost']} |" for x in s["lost_at_k"]]
        lines += [
            "",
            "| threshold | right lost | invented declined | of them unanswerable |",
            "|---|---|---|---|",
        ]
        lines += [f"| {x['threshold']} | {x['right_lost']} | {x['invented_declined']} | {x['unanswerable_declined']} |"
                  for x in s["at_threshold"]]  # fmt: skip
    m = result["mtragun"]
    lines += ["", f"## MTRAG-UN dev (report only): {m['counts']}, AUC answerable vs unanswerable "
              f"{m['auc_answerable_vs_unanswerable']}", "",
              "| threshold | ANSWERABLE below | PARTIAL below | UNANSWERABLE below |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {x['threshold']} | {x['answerable_below']} | {x['partial_below']} | {x['unanswerable_below']} |"
              for x in m["at_threshold"]]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="the MTRAG data folder")
    parser.add_argument("--run", required=True, help="a run folder with predictions.jsonl and verdicts.jsonl")
    parser.add_argument("--weights", default=str(WEIGHTS))
    parser.add_argument("--seed", type=int, default=0, help="the pairs' seed (as the fit's)")
    parser.add_argument("--threshold", type=float, default=0.5, help="for the held-out accuracy")
    parser.add_argument("-o", "--output", help="all figures and per-answer scores (JSON)")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("--data or MTRAG_DATA is required")
    verifier = Verifier(Path(args.weights))
    data = Path(args.data)
    result = {"weights": args.weights, "held_out": held_out(verifier, data, args.seed, args.threshold),
              "run": run_figures(verifier, Path(args.run)), "mtragun": mtragun_figures(verifier, data)}  # fmt: skip
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(tables(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
