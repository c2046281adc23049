"""Which recorded tasks would see other excerpts under the excerpt options, and splicing their new answers.

The excerpt options (``Context.evidence_after_questions``, ``Context.evidence_shown_once``,
``Context.evidence_neighbour_weight``) change only what the answering prompts read, and the graph is
deterministic at temperature 0 on one machine: a task whose excerpts
stay the same gets the same answer. So a run with an option is the recorded run with only the tasks
whose excerpts change answered again (issue 47's ninth round, benchmarks/results/documents.md):

    python -m research.excerpt_changes changed runs/devC.jsonl --after-questions --shown-once \
        --tasks $MTRAG_DATA/tasks/mtragun_dev.jsonl -o runs/devC-changed.jsonl
    mtrag-graph answer runs/devC-changed.jsonl -o runs/devC-changed-out.jsonl --retrieve --index INDEX \
        --evidence-after-questions true --evidence-shown-once true
    python -m research.excerpt_changes splice runs/devC.jsonl runs/devC-changed-out.jsonl -o runs/devC-options.jsonl

For a real-documents run folder, ``--resume-copy DIR`` writes a copy of the folder without the changed
tasks, which ``python -m benchmarks.real_documents -o DIR`` (with a preset setting the options) answers
again. Each record's excerpts are recomputed from its own standalone question and kept passages
(``research.trust_variants.kept_passages``: a task asked back kept none), with and without the options;
no model call but the embedder.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.models import get_embedder
from mtrag_graph.prompts.build import question_for_answering
from mtrag_graph.prompts.excerpts import DEFAULT_OPTIONS, Options, select_evidence
from research.trust_variants import kept_passages


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def changed_ids(
    records: Sequence[dict[str, Any]],
    options: Options,
    embed: Callable[[Sequence[str]], Any],
    budget: int = Context().evidence_tokens,
) -> list[str]:
    """The task ids whose excerpts differ under ``options`` from the default's."""
    changed = []
    for record in records:
        passages = kept_passages(record)
        if record.get("status", "ok") != "ok" or not passages:
            continue
        question = question_for_answering(
            {**(record.get("route") or {}), "question": record["input"][-1]["text"]}
        )
        before = select_evidence(question, passages, budget, embed, DEFAULT_OPTIONS)
        if select_evidence(question, passages, budget, embed, options) != before:
            changed.append(record["task_id"])
    return changed


def splice(base: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``base`` with each of ``new``'s tasks in its place; every new task must be one of the base's."""
    replacements = {r["task_id"]: r for r in new}
    unknown = sorted(set(replacements) - {r["task_id"] for r in base})
    if unknown:
        raise ValueError(f"tasks not in the base run: {unknown[:5]}")
    return [replacements.get(r["task_id"], r) for r in base]


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.excerpt_changes", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    changed = commands.add_parser("changed", help="the recorded tasks whose excerpts the options change")
    changed.add_argument("predictions", type=Path, help="a run's predictions (JSONL)")
    changed.add_argument("--after-questions", action="store_true")
    changed.add_argument("--shown-once", action="store_true")
    changed.add_argument("--neighbour-weight", type=float, default=0.0, help="Options.neighbour_weight")
    changed.add_argument(
        "--embedder", default=Context().embedder, help="the run's embedder (default: %(default)s)"
    )
    changed.add_argument("--tasks", type=Path, help="a task file: write the changed tasks from it to -o")
    changed.add_argument("-o", "--output", type=Path)
    changed.add_argument("--resume-copy", type=Path, help="a real-documents run folder to write without them")
    joined = commands.add_parser("splice", help="a run with some of its tasks answered again")
    joined.add_argument("base", type=Path)
    joined.add_argument("new", type=Path)
    joined.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "splice":
        try:
            spliced = splice(_records(args.base), _records(args.new))
        except ValueError as error:
            print(f"error: {args.new}: {error}", file=sys.stderr)
            return 2
        _write(args.output, spliced)
        print(f"{len(_records(args.new))} of {len(spliced)} tasks replaced -> {args.output}", file=sys.stderr)
        return 0
    if args.tasks is not None and args.output is None:
        print("error: --tasks needs -o (where the changed tasks go)", file=sys.stderr)
        return 2
    options = Options(args.after_questions, args.shown_once, args.neighbour_weight)
    records = _records(args.predictions)
    ids = changed_ids(records, options, get_embedder(args.embedder).embed)
    print(f"{len(ids)} of {len(records)} tasks see other excerpts", file=sys.stderr)
    for task_id in ids:
        print(task_id)
    if args.tasks is not None:
        wanted = set(ids)
        _write(args.output, [t for t in _records(args.tasks) if t["task_id"] in wanted])
    if args.resume_copy is not None:
        args.resume_copy.mkdir(parents=True, exist_ok=True)
        folder = args.predictions.parent
        (args.resume_copy / "tasks.jsonl").write_text(
            (folder / "tasks.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
        )
        _write(args.resume_copy / "predictions.jsonl", [r for r in records if r["task_id"] not in set(ids)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
