"""``mtrag-graph exemplars TASKS.jsonl -o mtrag_graph/data/exemplars.json``: few-shot exemplars by medoid."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from mtrag_graph import settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "exemplars",
        help="choose the few-shot exemplars (one medoid task per category)",
        description="Group the training tasks of TASKS.jsonl into the few-shot categories (no passages, "
        "first turn, follow-up with history, clarification with history), take each category's medoid "
        "by embedding distance, shorten it and write the exemplars file the few-shot prompt loads.",
    )
    parser.add_argument("tasks", help="training tasks with targets, one JSON object per line")
    parser.add_argument("-o", "--output", required=True, help="exemplars file to write (JSON)")
    parser.add_argument(
        "--embedder", default=settings.DEFAULT_EMBEDDER, help="embedder spec (default: the bundled minilm)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.models import get_embedder
    from mtrag_graph.prompts.exemplars import select_exemplars
    from mtrag_graph.tasks import read_jsonl

    tasks = [raw for _, raw, error in read_jsonl(args.tasks) if raw is not None and error is None]
    embedder = get_embedder(args.embedder)
    exemplars = select_exemplars(tasks, embedder.embed)
    card = {
        "command": f"mtrag-graph exemplars $MTRAG_DATA/tasks/{Path(args.tasks).name} -o {args.output}"
        + (f" --embedder {args.embedder}" if args.embedder != settings.DEFAULT_EMBEDDER else ""),
        "data": f"tasks/{Path(args.tasks).name}",
        "data_sha256": hashlib.sha256(Path(args.tasks).read_bytes()).hexdigest(),
        "split": "tuning (never the report split)",
    }
    data = {"source": Path(args.tasks).name, "embedder": args.embedder, "card": card, "exemplars": exemplars}
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    for exemplar in exemplars:
        print(f"{exemplar['category']:<22} {exemplar['task_id']}", file=sys.stderr)
    return 0
