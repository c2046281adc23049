"""``mtrag-graph answer TASKS.jsonl -o PREDICTIONS.jsonl``: run the graph over a benchmark file."""

from __future__ import annotations

import argparse
import sys


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Model and setting overrides shared by the commands that run the graph."""
    group = parser.add_argument_group("models and settings (default: the offline bundled models)")
    group.add_argument("--small-model", help="spec for rewriting")
    group.add_argument(
        "--large-model", help="spec for classification, clarification, the gate and generation"
    )
    for role in ("rewrite", "classify", "gate", "generate", "clarify"):
        group.add_argument(f"--{role}-model", help=f"spec for the {role} node (overrides --small/--large)")
    group.add_argument("--embedder", help="embedder spec: minilm, st:/path, flag:/path, bge-m3:/path")
    group.add_argument("--reranker", help="reranker spec: embedding or cross-encoder:/path")
    group.add_argument("--top-k", type=int, help="passages kept after reranking (default 5)")
    group.add_argument("--index", dest="index_dir", help="index folder for full-RAG tasks (no contexts)")
    group.add_argument("--idk-answer", help="the answer given when abstaining")
    group.add_argument(
        "--candidates",
        metavar="PRESET_OR_FILE",
        help="answer ensemble: a preset name (e.g. ensemble-local) or a JSON file of candidates "
        "(docs/ensemble.md)",
    )


def at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_concurrency_options(parser: argparse.ArgumentParser, what: str = "tasks") -> None:
    """``--concurrency`` and ``--endpoint-concurrency`` (see mtrag_graph/runtime/concurrency.py)."""
    parser.add_argument(
        "--concurrency",
        type=at_least_one,
        default=1,
        metavar="N",
        help=f"{what} in flight at once (default 1); local llama.cpp models still run one call at a time",
    )
    parser.add_argument(
        "--endpoint-concurrency",
        type=at_least_one,
        metavar="M",
        help="requests in flight per remote endpoint (default: one per task in flight)",
    )


def overrides_from_args(args: argparse.Namespace) -> dict:
    """Context overrides from the model and setting flags (unset flags are None and ignored)."""
    small, large = args.small_model, args.large_model
    return {
        "rewrite_model": args.rewrite_model or small,
        "classify_model": args.classify_model or large,
        "gate_model": args.gate_model or large,
        "generate_model": args.generate_model or large,
        "clarify_model": args.clarify_model or large,
        "embedder": args.embedder,
        "reranker": args.reranker,
        "top_k": args.top_k,
        "index_dir": args.index_dir,
        "idk_answer": args.idk_answer,
        "candidates": args.candidates,
        "clarify": getattr(args, "clarify", None),  # unset: the preset decides
    }


def context_from_args(args: argparse.Namespace):
    from mtrag_graph.context import Context

    return Context.from_preset(getattr(args, "preset", None), **overrides_from_args(args))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "answer",
        help="answer every task of a benchmark file",
        description="Answer every task of TASKS.jsonl; writes each task with its prediction and route, "
        "one line per task as it goes. Re-running resumes: tasks already in the output are skipped.",
    )
    parser.add_argument("tasks", help="MTRAG tasks, one JSON object per line")
    parser.add_argument("-o", "--output", required=True, help="predictions file (JSON lines, appended)")
    parser.add_argument("--limit", type=int, help="answer only the first N tasks")
    parser.add_argument("--show", action="store_true", help="print each question and answer as it is done")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--preset", help="pipeline preset: a name in mtrag_graph/presets or a .json path")
    parser.add_argument(
        "--trace-file", help="append each task's run tree here (JSON lines; see `trace show`)"
    )
    parser.add_argument(
        "--clarify",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="switch the clarify node on or off (Context.clarify: asks when unclear; on in the default preset ncl)",
    )
    parser.add_argument(
        "--retrieve",
        action="store_true",
        help="full RAG (MTRAG Task C): retrieve passages for every task from --index, ignoring its contexts; "
        "the retrieved passages are written as the prediction's contexts (the reference ones as "
        "reference_contexts)",
    )
    add_concurrency_options(parser)
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.graph import build_graph
    from mtrag_graph.runtime.batch import answer_tasks
    from mtrag_graph.runtime.tracing import tracing_callbacks

    def show(record: dict) -> None:
        if record.get("status") != "ok":
            return
        question = record["input"][-1]["text"]
        print(f"\n[{record['task_id']}]\nQ: {question}\nA: {record['predictions'][0]['text']}", flush=True)

    summary = answer_tasks(
        args.tasks,
        args.output,
        context_from_args(args),
        limit=args.limit,
        progress=not args.no_progress,
        on_record=show if args.show else None,
        graph=build_graph(),
        config={"callbacks": tracing_callbacks(args.trace_file)},
        concurrency=args.concurrency,
        endpoint_concurrency=args.endpoint_concurrency,
        retrieve=args.retrieve,
    )
    print("\n" + summary.render(), file=sys.stderr)
    return 1 if summary.failed else 0
