"""How far could picking among sampled answers go? The right answers in ``research.decline_samples``'s samples.

``research.decline_samples`` samples K replies per task from a rebuilt answer prompt (``--samples K``).
This scores every sample of every answerable task as the real-documents benchmark scores an answer
(``benchmarks.real_documents.score``: every key fact, no decline, no yes/no against the reference's) and
counts, for the run's right answers and its misses apart (a miss split by whether a kept passage held
the fact):

- at least one right sample: what any rule that picks one of the samples could reach at best;
- a majority of right samples: what a vote among them would give;
- every sample a decline.

No model call; it reads the two files.

    python -m research.decline_samples RUN -o runs/samples.jsonl --samples 5 --prompts plain
    python -m research.sample_ceiling RUN runs/samples.jsonl --prompt plain
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import Turn, load_set, turn_of
from benchmarks.real_documents.score import contradicts, facts_found
from mtrag_graph.text import declines


def sample_right(reply: str, turn: Turn) -> bool:
    """A sampled reply scored as the benchmark scores an answer."""
    return (
        not declines(reply)
        and facts_found(reply, turn.key_facts) == len(turn.key_facts)
        and not contradicts(reply, turn.answer)
    )


def row_name(verdict: Mapping[str, Any]) -> str:
    if verdict["right"]:
        return "right"
    return "miss, fact kept" if verdict.get("retrieved") else "miss, fact not kept"


def ceiling(
    verdicts: Sequence[Mapping[str, Any]], samples: Mapping[str, Sequence[str]], turns: Mapping[str, Turn]
) -> dict[str, dict[str, int]]:
    """Per row: tasks, tasks with at least one right sample, with a majority, with every sample declining."""
    table: dict[str, dict[str, int]] = {}
    for verdict in verdicts:
        replies = samples.get(verdict["task_id"])
        if not verdict["answerable"] or not replies:
            continue
        turn = turns[verdict["task_id"]]
        right = sum(sample_right(r, turn) for r in replies)
        counts = table.setdefault(row_name(verdict), {"tasks": 0, "any": 0, "majority": 0, "all declined": 0})
        counts["tasks"] += 1
        counts["any"] += right > 0
        counts["majority"] += right > len(replies) / 2
        counts["all declined"] += all(declines(r) for r in replies)
    return table


def render(table: Mapping[str, Mapping[str, int]], run_right: int, answerable: int) -> str:
    lines = [
        "| run's answer | tasks sampled | >= 1 right sample | majority right | every sample declines |",
        "|---|---|---|---|---|",
    ]
    for name in ("right", "miss, fact kept", "miss, fact not kept"):
        c = table.get(name)
        if c:
            lines.append(f"| {name} | {c['tasks']} | {c['any']} | {c['majority']} | {c['all declined']} |")
    gained = sum(table.get(n, {}).get("any", 0) for n in ("miss, fact kept", "miss, fact not kept"))
    lines.append(
        f"\nThe run: {run_right} of {answerable} answerable right; with a perfect pick among the samples of "
        f"the misses sampled: at most {run_right + gained} of {answerable}."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a real-documents run folder (verdicts.jsonl)")
    parser.add_argument("samples", type=Path, help="research.decline_samples' output (with --samples)")
    parser.add_argument("--prompt", default="plain", help="which prompt's samples (default plain)")
    args = parser.parse_args(argv)
    if not (args.run / "verdicts.jsonl").is_file() or not args.samples.is_file():
        print(f"error: need {args.run / 'verdicts.jsonl'} and {args.samples}", file=sys.stderr)
        return 2
    verdicts = [
        json.loads(line) for line in (args.run / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines()]
    samples = {r["task_id"]: (r.get(args.prompt) or {}).get("samples") or [] for r in rows}
    questions = load_set()
    turns = {v["task_id"]: turn_of(questions, v["task_id"])[2] for v in verdicts}
    answerable = sum(v["answerable"] for v in verdicts)
    print(render(ceiling(verdicts, samples, turns), sum(v["right"] for v in verdicts), answerable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
