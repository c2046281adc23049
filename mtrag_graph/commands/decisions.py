"""``mtrag-graph decisions``: each decision node alone on a labelled set, scored against the data's labels."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from mtrag_graph import settings
from mtrag_graph.commands._options import add_model_options, overrides_from_args

DECISION_NAMES = ("gate", "evidence", "clarify", "relation")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decisions",
        help="score the gate/decline, clarify and relation decisions on labelled sets",
        description="Run each decision node alone over a set built from the benchmark files and score it: "
        "gate + generator decline (answerable turns with their passages against unanswerable turns with "
        "retrieved passages and turns given another conversation's passages), clarify (UNDERSPECIFIED "
        "against ANSWERABLE/PARTIAL), relation class. Tune on --split tuning, report on --split report. "
        "Per-item results are cached: re-running resumes.",
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (the research tree's gate fit, research/fit_gate.py, takes them too)."""
    parser.add_argument("--data", default=settings.data_dir_given(), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("--split", choices=["tuning", "report"], default="report")
    parser.add_argument(
        "--tasks",
        metavar="FILE.jsonl",
        help="score on this task file instead of the split's (e.g. the clarify twins of `python -m "
        "research.clarify_twins`); --split then only names the run",
    )
    parser.add_argument("--only", nargs="+", choices=DECISION_NAMES, default=list(DECISION_NAMES))
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="tables, JSON and item cache")
    parser.add_argument("--limit-per-kind", type=int, help="subsample each item kind / class (CPU budget)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="ncl", help="Context preset (default ncl)")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="FIELD=JSON",
        help="a Context override, e.g. --set gate_classifier=null (value parsed as JSON, else a string)",
    )
    parser.add_argument("--label", default="", help="a name for this run in the tables")
    parser.add_argument(
        "--generate",
        choices=["after-yes", "always", "never"],
        default="after-yes",
        help="gate set: generate after a gate 'yes' (as the graph does, default), always, or never (gate alone)",
    )
    parser.add_argument(
        "--no-yes-probability",
        dest="ask_model",
        action="store_false",
        help="gate set: do not ask the gate model when the decision rule does not need it",
    )
    add_model_options(parser)  # its --index: the corpora/mini index that UNANSWERABLE turns retrieve from


def _settings(pairs: list[str]) -> dict:
    parsed = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set expects FIELD=VALUE, got '{pair}'")
        try:
            parsed[name] = json.loads(value)
        except json.JSONDecodeError:
            parsed[name] = value
    return parsed


def run(args: argparse.Namespace, after_decision: Any = None) -> int:
    """The benchmark; ``after_decision``: see ``measure.decisions.bench.run_benchmark``."""
    from mtrag_graph.context import Context
    from mtrag_graph.measure.decisions.bench import run_benchmark

    if not args.data:
        print("error: pass --data or set MTRAG_DATA to the benchmark data folder", file=sys.stderr)
        return 2
    context = Context.from_preset(args.preset, **overrides_from_args(args))
    known = {f.name for f in dataclasses.fields(context)}
    changes = _settings(args.settings)
    for name in changes:
        if name not in known:
            print(f"error: --set {name}: not a Context field", file=sys.stderr)
            return 2
    context = dataclasses.replace(context, **changes)  # after the preset: null must reach the field too
    markdown = run_benchmark(
        data_dir=args.data,
        split=args.split,
        tasks_file=args.tasks,
        decisions=args.only,
        context=context,
        out_dir=Path(args.output),
        index_dir=args.index_dir,
        limit_per_kind=args.limit_per_kind,
        seed=args.seed,
        label=args.label,
        generate=args.generate,
        ask_model=args.ask_model,
        after_decision=after_decision,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(markdown)
    return 0
