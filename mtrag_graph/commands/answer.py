"""``mtrag-graph answer TASKS.jsonl -o PREDICTIONS.jsonl``: run the graph over a benchmark file."""

from __future__ import annotations

import argparse
import sys

from mtrag_graph.commands._options import (
    add_concurrency_options,
    add_model_options,
    add_preset_option,
    context_from_args,
)


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
    add_preset_option(parser)
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
        graph=build_graph(output="state"),
        config={"callbacks": tracing_callbacks(args.trace_file)},
        concurrency=args.concurrency,
        endpoint_concurrency=args.endpoint_concurrency,
        retrieve=args.retrieve,
    )
    print("\n" + summary.render(), file=sys.stderr)
    return 1 if summary.failed else 0
