"""Would reading again help where the decline probability declines? The model_unsure tasks asked once more.

For every task of real-documents runs (``python -m benchmarks.real_documents`` folders) that the run
declined with ``abstain_reason`` in ``--reasons`` (default ``model_unsure``: the answer prompt put at least
``sample_decline_threshold`` on a decline), the rewritten question and the kept passages whole are asked
again (``research.decline_samples.plain_messages``: the graph's decline instruction, and the neutral
one), greedy, and the decline probability of that prompt is read (``judging.decline.decline_probability``).
Prints one JSON line per task: the two replies, their decline probabilities and seconds, the reference.

    python -m research.unsure_reread runs/rd-fresh-D runs/rd-report-D runs/rd-tuning-D -o runs/unsure-reread.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import decline_probability
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.models.calls import invoke_text
from research.decline_samples import NEUTRAL, plain_messages, read_run, task_state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="real-documents run folders")
    parser.add_argument("-o", "--output", type=Path, required=True, help="JSON lines, one per task")
    parser.add_argument(
        "--reasons", default="model_unsure", help="abstain reasons asked again (comma-separated)"
    )
    args = parser.parse_args(argv)
    context = Context()
    embed = get_embedder(context.embedder).embed
    model = get_chat_model(context.generate_model)
    reasons = set(args.reasons.split(","))
    with args.output.open("w") as out:
        for run in args.runs:
            read = read_run(run)
            if read is None:
                return 2
            records, verdict_rows = read
            verdicts = {v["task_id"]: v for v in verdict_rows}
            for record in records.values():
                if (record.get("route") or {}).get("abstain_reason") not in reasons:
                    continue
                state = task_state(record, context, embed)
                row = {"run": run.name, "task_id": record["task_id"],
                       "answerable": verdicts[record["task_id"]]["answerable"]}  # fmt: skip
                for name, instruction in (("plain", ""), ("neutral", NEUTRAL)):
                    messages = plain_messages(state, context, instruction)
                    start = time.monotonic()
                    row[f"{name}_p_decline"] = decline_probability(model, messages)
                    row[name] = str(invoke_text(model, messages, max_tokens=120).content).strip()
                    row[f"{name}_seconds"] = round(time.monotonic() - start, 1)
                row["reference"] = record["targets"][0]["text"]
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(f"{row['task_id']}: p {row['plain_p_decline']} | {row['plain'][:120]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
