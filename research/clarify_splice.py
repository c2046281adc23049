"""HM3 with clarify against without, answering again only the turns clarify asked back.

The graph is deterministic at temperature 0: on MTRAG-UN dev Task B, the 105 tasks the clarify node did
not ask back got the same answer, character for character, from a run with ``--no-clarify`` (the other
11 were asked back). So the run without clarify is the run with it, its asked-back tasks answered again
with ``--no-clarify``:

    python -m research.clarify_splice asked runs/devC-full-clarify.jsonl $MTRAG_DATA/tasks/mtragun_dev.jsonl -o runs/devC-asked.jsonl
    mtrag-graph answer runs/devC-asked.jsonl -o runs/devC-asked-noclarify.jsonl --no-clarify --retrieve --index INDEX
    python -m research.clarify_splice splice runs/devC-full-clarify.jsonl runs/devC-asked-noclarify.jsonl -o runs/devC-full-noclarify.jsonl
    mtrag-graph evaluate --compare runs/devC-full-noclarify.jsonl runs/devC-full-clarify.jsonl --ratings fitted --tasks $MTRAG_DATA/tasks/mtragun_dev.jsonl -o runs/cmp-clarify-C
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def asked_ids(predictions: list[dict[str, Any]]) -> set[str]:
    """The tasks whose run asked a clarifying question."""
    return {
        r["task_id"] for r in predictions if ((r.get("route") or {}).get("clarification") or {}).get("asked")
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_splice", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    asked = commands.add_parser("asked", help="the tasks a run asked back, as a task file")
    asked.add_argument("predictions", type=Path)
    asked.add_argument("tasks", type=Path)
    asked.add_argument("-o", "--output", type=Path, required=True)
    splice = commands.add_parser("splice", help="the run with its asked-back tasks replaced")
    splice.add_argument("predictions", type=Path)
    splice.add_argument("replacements", type=Path)
    splice.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    predictions = _records(args.predictions)
    ids = asked_ids(predictions)
    if args.command == "asked":
        chosen = [t for t in _records(args.tasks) if t["task_id"] in ids]
        args.output.write_text(
            "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in chosen), encoding="utf-8"
        )
        print(f"{len(chosen)} asked-back tasks -> {args.output}", file=sys.stderr)
        return 0
    replacements = {r["task_id"]: r for r in _records(args.replacements)}
    missing = sorted(ids - set(replacements))
    if missing:
        print(f"error: {args.replacements}: no answer for asked-back tasks {missing[:5]}", file=sys.stderr)
        return 2
    spliced = [replacements.get(r["task_id"], r) if r["task_id"] in ids else r for r in predictions]
    args.output.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in spliced), encoding="utf-8"
    )
    print(f"{len(ids)} of {len(spliced)} tasks replaced -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
