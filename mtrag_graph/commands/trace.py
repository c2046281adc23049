"""``mtrag-graph trace show PATH``: print a trace file (``--trace-file``) as an indented tree with timings."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# Metadata shown next to a run's name (the rest stays in the file).
SHOWN = (
    "relation", "gate", "clarify", "retries", "abstain_reason", "passages", "picked", "models",
    "model_name", "prompt_tokens", "completion_tokens", "fallbacks", "error", "standalone_question", "answer",
)  # fmt: skip


def _value(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def render(tree: dict[str, Any], *, routers: bool = False, models: bool = True) -> list[str]:
    """The run tree as indented lines: name, seconds, the decisions a node recorded."""
    lines: list[str] = []

    def walk(run: dict[str, Any], depth: int) -> None:
        name = run["name"]
        if not routers and name.startswith("route"):
            return
        if not models and run["run_type"] in ("llm", "chat_model"):
            return
        seconds = f"{run['seconds']:.3f}s" if run.get("seconds") is not None else "?"
        meta = run.get("metadata", {})
        details = "  ".join(f"{key}={_value(meta[key])}" for key in SHOWN if meta.get(key) not in (None, []))
        error = f"  ERROR {run['error']}" if run.get("error") else ""
        lines.append(
            f"{'  ' * depth}{name:<{max(1, 28 - 2 * depth)}} {seconds:>8}  {details}{error}".rstrip()
        )
        for child in run.get("children", []):
            walk(child, depth + 1)

    header = f"task {tree.get('task_id')}"
    lines.append(header)
    walk(tree, 1)
    if tree.get("answer") is not None:
        lines.append(f"  => {_value(tree['answer'], 200)}")
    return lines


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("trace", help="inspect trace files written with --trace-file")
    actions = parser.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print each task's run tree with timings")
    show.add_argument("path", help="trace file (JSON lines, one run tree per task)")
    show.add_argument("--task", help="only this task_id")
    show.add_argument("--routers", action="store_true", help="also show the router runs")
    show.add_argument("--no-models", action="store_true", help="hide the model-call runs")
    show.set_defaults(func=run_show)


def run_show(args: argparse.Namespace) -> int:
    shown = 0
    with open(args.path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            tree = json.loads(line)
            if args.task and tree.get("task_id") != args.task:
                continue
            print("\n".join(render(tree, routers=args.routers, models=not args.no_models)))
            shown += 1
    if not shown:
        print(f"no run trees{f' for task {args.task}' if args.task else ''} in {args.path}", file=sys.stderr)
        return 1
    return 0
