"""A recorded run as the graph with ``howto_quote`` on would have written it (``judging.commands``).

Each answered how-to question gets the passage sentence or code line that holds its draft's command
(the draft before the grounding check, ``grounding.answer_before``), quoted after the answer and
grounded again, so the quote is cited by its passage. Abstentions, clarifying questions and other
answers are copied as they are. No model call.

    python -m research.command_quote_offline runs/qa/devB-new3.jsonl -o runs/qa/devB-howto.jsonl
    python -m research.command_quote_offline runs/rd-fresh-E -o runs/rd-fresh-howto   # a real-documents run folder

Then score the output against the input (``mtrag-graph evaluate --compare``, or
``benchmarks.real_documents --score-only -o FOLDER``). Each changed answer is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.verdict import quote_command
from research.trust_variants import kept_passages


def quoted_record(record: dict[str, Any], context: Context) -> tuple[dict[str, Any], bool]:
    """The record with its how-to answer's command quoted (and whether it changed), by the graph's own
    ``judging.verdict.quote_command`` on the recorded draft and kept answer."""
    route = record.get("route") or {}
    clarification = route.get("clarification") or {}
    if route.get("abstained") or (clarification.get("asked") and not clarification.get("reply")):
        return record, False
    answer = str((record.get("predictions") or [{}])[0].get("text") or "")
    passages = kept_passages(record)
    if not answer or not passages:
        return record, False
    recorded = {"sentences": [], **(route.get("grounding") or {})}
    draft = str(recorded.get("answer_before") or answer)
    state = {
        "question": record["input"][-1]["text"],
        "standalone_question": route.get("standalone_question"),
        "kept_passages": passages,
        "history": record["input"][:-1],
    }
    quoted, grounding = quote_command(state, context, draft, answer, recorded)
    if quoted == answer:
        return record, False  # no line to quote, or the quote not backed whole: the answer as it was
    citations = [s for s in grounding["sentences"] if s.get("supported")]
    return {**record, "route": {**route, "grounding": grounding},
            "predictions": [{"text": quoted, "citations": citations}]}, True  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a predictions JSONL file or a real-documents run folder")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    folder = args.run.is_dir()
    source = args.run / "predictions.jsonl" if folder else args.run
    target = args.output / "predictions.jsonl" if folder else args.output
    if folder:
        args.output.mkdir(parents=True, exist_ok=True)
        shutil.copy(args.run / "tasks.jsonl", args.output / "tasks.jsonl")
    context = Context()
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    changed = 0
    with target.open("w") as out:
        for record in records:
            new, did = quoted_record(record, context)
            if did:
                changed += 1
                print(f"{record['task_id']}\n  before: {record['predictions'][0]['text'][:200]}"
                      f"\n  after:  ...{new['predictions'][0]['text'][-220:]}", file=sys.stderr)  # fmt: skip
            out.write(json.dumps(new, ensure_ascii=False) + "\n")
    print(f"{changed} of {len(records)} answers quote a command", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
