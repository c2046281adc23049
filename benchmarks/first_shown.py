"""First shown text and prompt tokens per question, first turns and follow-ups apart, for bench runs.

`mtrag-graph bench` writes each run's predictions (PRESET.jsonl, streamed: each route holds
``first_shown_seconds``, the seconds until the first text a person sees, and the prompt tokens the
models processed). This prints one table over several such files (e.g. today's main and this
checkout, run one after the other on the same machine and tasks):

    python -m benchmarks.first_shown before=runs/bench-before/ncl.jsonl after=runs/bench-after/ncl.jsonl

A turn is a follow-up when its task has earlier turns (``input`` holds more than the question).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from mtrag_graph.measure.bench import percentile


def _kind(record: dict[str, Any]) -> str:
    return "follow-up" if len(record.get("input") or []) > 1 else "first turn"


def rows_of(label: str, records: list[dict[str, Any]]) -> list[str]:
    rows = []
    for kind in ("first turn", "follow-up"):
        ok = [r for r in records if r.get("status") == "ok" and _kind(r) == kind]
        if not ok:
            continue
        shown = [
            r["route"]["first_shown_seconds"] for r in ok if r["route"].get("first_shown_seconds") is not None
        ]
        total = [float(r["route"]["seconds"]) for r in ok]
        processed = [int(r["route"].get("prompt_tokens_processed") or 0) for r in ok]
        calls = [int(r["route"].get("model_calls") or 0) for r in ok]
        twice = sum(int(r["route"].get("retries") or 0) >= 1 for r in ok)
        p = f"{percentile(shown, 0.5):.1f} / {percentile(shown, 0.95):.1f}" if shown else "- / -"
        rows.append(
            f"| {label} | {kind} | {len(ok)} | {p} | {percentile(total, 0.5):.1f} | {statistics.mean(processed):.0f} "
            f"| {statistics.mean(calls):.1f} | {twice} of {len(ok)} |"
        )
    return rows


def table(runs: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| run | turns | questions | first shown p50 / p95 s | whole answer p50 s | prompt tokens processed "
        "per question | model calls per question | answers drafted twice |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, records in runs.items():
        lines.extend(rows_of(label, records))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="LABEL=PREDICTIONS.jsonl (a bench run's predictions)")
    args = parser.parse_args(argv)
    runs = {}
    for item in args.runs:
        label, _, path = item.partition("=")
        if not path:
            parser.error(f"expected LABEL=PREDICTIONS.jsonl, got {item!r}")
        runs[label] = [
            json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line
        ]
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
