"""Each single candidate vs the judged ensemble vs a random pick, on a few tasks.

    python -m research.ensemble_compare /work/shared/data/mtrag/tasks/mtragun_dev.jsonl --limit 6

One ensemble run per task yields every candidate's answer, the judge's pick and timings, so the
single-candidate rows are derived from the same run: a candidate's answer is its reply as generated
(a failed or declining candidate counts as an abstention; no verdict retry), and its seconds per
task are the run's time without the other candidates and the judge. ROUGE-L is ``rouge_score``'s
RougeScorer(["rougeL"]) F-measure against the task's target; an abstention is scored with the
configured "I don't know" answer.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from rouge_score.rouge_scorer import RougeScorer

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.tasks import read_jsonl
from mtrag_graph.text import declines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks")
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--candidates", default="ensemble-local", help="preset name or JSON file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random pick")
    parser.add_argument("-o", "--output", help="also write per-task records here (JSON lines)")
    args = parser.parse_args(argv)

    context = Context(candidates=args.candidates)
    graph = build_graph(output="state")
    scorer = RougeScorer(["rougeL"])
    rng = random.Random(args.seed)
    names = [c.label for c in context.candidates]
    systems = [*names, "judged ensemble", "random pick"]
    rouge: dict[str, list[float]] = {s: [] for s in systems}
    abstained = dict.fromkeys(systems, 0)
    seconds: dict[str, list[float]] = {s: [] for s in systems}
    records = []

    tasks: list[dict[str, Any]] = [
        raw for _, raw, error in read_jsonl(args.tasks) if error is None and isinstance(raw, dict)
    ][: args.limit]
    for n, task in enumerate(tasks, start=1):
        target = (task.get("targets") or [{}])[0].get("text", "")
        started = time.perf_counter()
        state = graph.invoke({"task": task}, context=context)
        wall = time.perf_counter() - started
        entries = {e["index"]: e for e in state.get("candidate_answers") or []}
        judge_seconds = sum(
            s["seconds"] for s in state.get("node_seconds", []) if s["node"] == "judge_candidates"
        )
        # the candidates run concurrently: what they cost together is the wall time not spent in the
        # sequential nodes (everything else) or the judge
        shared = sum(
            s["seconds"]
            for s in state.get("node_seconds", [])
            if s["node"] not in ("generate_candidate", "judge_candidates")
        )
        candidate_phase = max(wall - shared - judge_seconds, 0.0)
        answers: dict[str, str | None] = {}
        for i, name in enumerate(names):
            entry = entries.get(i)
            text = entry.get("text") if entry else None
            answers[name] = None if not text or declines(text) else text
            # before the gate said yes no candidate ran: every system shares the abstention and its time
            seconds[name].append(shared + (entry["seconds"] if entry else 0.0))
        answers["judged ensemble"] = None if state.get("abstain_reason") else state["answer"]
        seconds["judged ensemble"].append(wall)
        usable = [e for e in entries.values() if e.get("text")]
        pick = rng.choice(usable) if usable else None
        answers["random pick"] = pick["text"] if pick and not declines(pick["text"]) else None
        seconds["random pick"].append(shared + candidate_phase)
        for system, answer in answers.items():
            abstained[system] += answer is None
            rouge[system].append(scorer.score(target, answer or context.idk_answer)["rougeL"].fmeasure)
        records.append(
            {"task_id": task.get("task_id"), "target": target, "answers": answers, "seconds": round(wall, 1),
             "abstain_reason": state.get("abstain_reason"), "judgement": state.get("judgement")}
        )  # fmt: skip
        outcome = state.get("abstain_reason") or "answered"
        print(f"[{n}/{len(tasks)}] {task.get('task_id')} {wall:.0f}s {outcome}", file=sys.stderr, flush=True)

    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"\n{len(tasks)} tasks of {Path(args.tasks).name}, candidates: {args.candidates}\n")
    print("| system | ROUGE-L F (mean) | abstentions | seconds per task |")
    print("|---|---:|---:|---:|")
    for system in systems:
        mean_rouge = sum(rouge[system]) / max(len(rouge[system]), 1)
        mean_seconds = sum(seconds[system]) / max(len(seconds[system]), 1)
        print(f"| {system} | {mean_rouge:.3f} | {abstained[system]}/{len(tasks)} | {mean_seconds:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
