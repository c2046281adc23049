"""What each run did per answerability class: answered, said "I don't know", asked to clarify; and its cost.

    python -m research.answer_outcomes runs/ncl.jsonl runs/ncl-clarify.jsonl [--json FILE]

Reads `mtrag-graph answer` outputs (each task with its prediction and route). "Declined" is the refusal
detector of the evaluation (`text.declines`, the default IDK verdict); "clarified" is the clarify
node's route (`clarification.asked`). Seconds are the run's own per-task wall time; model calls served by
the reply cache (MTRAG_LLM_CACHE) are counted apart, since their seconds are not model time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from mtrag_graph.tasks import ANSWERABILITY
from mtrag_graph.text import decline_verdict


def _answerability(task: dict) -> str:
    value = task.get("Answerability") or task.get("answerability") or ["?"]
    return value[0] if isinstance(value, list) else str(value)


def outcome(task: dict) -> str:
    route = task.get("route") or {}
    if (route.get("clarification") or {}).get("asked"):
        return "clarified"
    text = ((task.get("predictions") or [{}])[0]).get("text") or ""
    return "declined" if decline_verdict(text) == "declines" else "answered"


def summarize(path: Path) -> dict:
    tasks = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    groups: dict[str, list[dict]] = {}
    for task in tasks:
        groups.setdefault(_answerability(task), []).append(task)
    order = [c for c in ANSWERABILITY if c in groups] + sorted(set(groups) - set(ANSWERABILITY))
    rows = {}
    for name, members in [("all", tasks), *((c, groups[c]) for c in order)]:
        outcomes = [outcome(t) for t in members]
        routes = [t.get("route") or {} for t in members]
        rows[name] = {
            "n": len(members),
            **{k: outcomes.count(k) for k in ("answered", "declined", "clarified")},
            "seconds_mean": statistics.fmean(r.get("seconds") or 0.0 for r in routes) if routes else None,
            "model_calls": statistics.fmean(r.get("model_calls") or 0 for r in routes) if routes else None,
        }
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    args = parser.parse_args()
    result = {path.stem: summarize(path) for path in args.runs}
    print("| run | class | n | answered | declined | clarified | s/task | model calls/task |")
    print("|---|---|---|---|---|---|---|---|")
    for run, rows in result.items():
        for name, r in rows.items():
            print(
                f"| {run} | {name} | {r['n']} | {r['answered']} | {r['declined']} | {r['clarified']} | "
                f"{r['seconds_mean']:.1f} | {r['model_calls']:.1f} |"
            )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
