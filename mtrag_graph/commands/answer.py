"""``mtrag-graph answer TASKS.jsonl -o PREDICTIONS.jsonl``: run the graph over a benchmark file."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from mtrag_graph.stages import choices_of, cli_settings


def _flag(setting: dataclasses.Field) -> str:
    flag = setting.metadata["flag"]
    return flag if isinstance(flag, str) else "--" + setting.name.replace("_", "-")


def _default(setting: dataclasses.Field) -> Any:
    if setting.default is not dataclasses.MISSING:
        return setting.default
    return setting.default_factory()  # type: ignore[misc,operator]


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Model and setting overrides shared by the commands that run the graph: ``--small-model`` and
    ``--large-model``, then every setting a stage offers as a flag (``stages.setting(flag=True)``)."""
    from mtrag_graph.context import Context

    group = parser.add_argument_group("models and settings (default: the offline bundled models)")
    group.add_argument(
        "--small-model", help="spec for the models that default to MTRAG_SMALL_MODEL (rewriting)"
    )
    group.add_argument(
        "--large-model", help="spec for the models that default to MTRAG_LARGE_MODEL (every other model)"
    )
    choices = choices_of(Context)
    for setting in cli_settings(Context):
        default = _default(setting)
        kind = type(default) if isinstance(default, int | float) and not isinstance(default, bool) else str
        extra = f" (default {default})" if isinstance(default, int | float) and default != () else ""
        one_of = choices.get(setting.name)
        group.add_argument(
            _flag(setting), dest=setting.name, type=kind, metavar=setting.name.split("_")[-1].upper(),
            choices=[v for v in one_of.values if v is not None] if one_of and not one_of.many else None,
            help=setting.metadata["description"] + extra,
        )  # fmt: skip


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
    from mtrag_graph import settings
    from mtrag_graph.context import Context

    overrides: dict[str, Any] = {s.name: getattr(args, s.name, None) for s in cli_settings(Context)}
    for setting in dataclasses.fields(Context):
        if not setting.metadata.get("model") or overrides.get(setting.name) is not None:
            continue
        if setting.default_factory is settings.small_model:
            overrides[setting.name] = args.small_model
        elif setting.default_factory is settings.large_model:
            overrides[setting.name] = args.large_model
    overrides["clarify"] = getattr(args, "clarify", None)  # unset: the preset decides
    return overrides


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
        graph=build_graph(output="state"),
        config={"callbacks": tracing_callbacks(args.trace_file)},
        concurrency=args.concurrency,
        endpoint_concurrency=args.endpoint_concurrency,
        retrieve=args.retrieve,
    )
    print("\n" + summary.render(), file=sys.stderr)
    return 1 if summary.failed else 0
