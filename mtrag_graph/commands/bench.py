"""``mtrag-graph bench TASKS.jsonl``: speed of pipeline presets, side by side."""

from __future__ import annotations

import argparse

from mtrag_graph.commands._options import add_concurrency_options, add_model_options, overrides_from_args
from mtrag_graph.presets import DEFAULT_PRESET


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="time pipeline presets on the same tasks (a benchmark, not a test)",
        description="Runs each preset over the tasks (predictions go to OUT_DIR/<preset>.jsonl, resumable), "
        "then prints seconds per task, model time per node, calls, prompt tokens submitted vs processed "
        "(KV-cache reuse), generated tokens, orchestration overhead and peak memory; writes OUT_DIR/bench.json.",
    )
    parser.add_argument("tasks")
    parser.add_argument("-o", "--out-dir", default="runs/bench", help="where predictions and bench.json go")
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument(
        "--presets",
        nargs="+",
        default=[DEFAULT_PRESET],
        help=f"preset names or .json paths (default: {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--compare-prefix-cache",
        action="store_true",
        help="also run the first preset with llama.cpp prefix reuse disabled",
    )
    add_concurrency_options(parser)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.measure.bench import render, run_bench

    overrides = overrides_from_args(args)
    results = run_bench(
        args.tasks,
        args.presets,
        args.out_dir,
        limit=args.limit,
        overrides=overrides,
        compare_prefix_cache=args.compare_prefix_cache,
        concurrency=args.concurrency,
        endpoint_concurrency=args.endpoint_concurrency,
    )
    print(render(results))
    return 0
