"""Which answer-samples rule holds up across draws: expected outcomes of "k of n samples disagree".

``research.decline_samples --samples N --prompts sample`` draws N replies per task from the answer
samples' prompt. A rule that draws n of them and declines when k disagree with the answer (or the
first-token decline probability reaches the threshold) acts at random: one run of the graph is one draw.
Here each rule's expected outcome is computed exactly from the N recorded replies (n drawn without
replacement: the hypergeometric tail), per row of the table: right answers lost, wrong answers
declined, answered unanswerable questions declined.

    python -m research.samples_rule runs/decline-Y10.jsonl [--threshold 0.05]
"""

from __future__ import annotations

import argparse
import json
from math import comb
from pathlib import Path


def tail(total: int, bad: int, drawn: int, needed: int) -> float:
    """P(at least ``needed`` of ``drawn`` replies, drawn from ``total`` of which ``bad`` disagree, disagree)."""
    if drawn > total:
        return float("nan")
    return sum(comb(bad, i) * comb(total - bad, drawn - i) for i in range(needed, drawn + 1)) / comb(
        total, drawn
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("samples", type=Path)
    parser.add_argument("--threshold", type=float, default=0.05, help="decline probability that declines")
    parser.add_argument("--rules", nargs="+", default=["2/3", "3/3", "3/5", "4/5", "5/5", "4/7", "5/7"])
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.samples.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("answered") and r.get("sample")]
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["row"], []).append(row)
    print(
        f"rule (threshold {args.threshold}) | "
        + " | ".join(f"{g} ({len(v)})" for g, v in sorted(groups.items()))
    )
    print("|---" * (len(groups) + 1) + "|")
    for rule in ["probability only", *args.rules]:
        cells = []
        for _, members in sorted(groups.items()):
            expected = 0.0
            for row in members:
                sample = row["sample"]
                if (sample.get("p_decline") or 0) >= args.threshold:
                    expected += 1
                    continue
                if rule == "probability only":
                    continue
                needed, drawn = (int(x) for x in rule.split("/"))
                total, bad = len(sample["samples"]), len(sample["disagree"])
                expected += tail(total, bad, drawn, needed)
            cells.append(f"{expected:.1f}")
        print(f"| {rule} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
