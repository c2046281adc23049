"""A recorded run as the graph with ``yes_no_quote`` on would have written it.

Each answered yes/no question (``judging.yes_no.applies`` on the standalone question) is settled on its
quoted sentence with today's model and embedder, then grounded again, so its citations are the quote's
(``judging.answer_check.ground``). Abstentions and other answers are copied as they are. Then score the
output against the input (``mtrag-graph evaluate --compare``, or ``benchmarks.real_documents
--score-only`` on a folder holding it).

    python -m research.yes_no_offline runs/devB-S.jsonl -o runs/devB-Y.jsonl

The quote is settled after the answer samples here; the graph settles it before them (the samples are
then read against the quote). Each changed answer is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging import yes_no
from mtrag_graph.judging.answer_check import ground, quote_yes_no
from mtrag_graph.prompts.build import question_for_answering


def settled_record(
    record: dict[str, Any], context: Context, *, resettle: bool = False
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The record with its yes/no answer settled on a quote (and the settle record), or as it was;
    ``resettle``: an answer the recording graph settled is settled again from its draft."""
    route = record.get("route") or {}
    answer = str((record.get("predictions") or [{}])[0].get("text") or "")
    state = {**route, "question": record["input"][-1]["text"], "kept_passages": record.get("contexts") or [],
             "history": record["input"][:-1]}  # fmt: skip
    question = question_for_answering(state)
    recorded = (route.get("grounding") or {}).get("yes_no")
    if recorded and not resettle:
        return record, None  # settled by the graph that recorded it
    if recorded:
        if str(recorded.get("quote") or "\0") not in answer:
            return record, None  # a later stage replaced the settled answer (a decline, a clarification)
        answer = str(recorded.get("answer_before") or answer)  # settled again from the graph's draft
    elif (
        resettle
        or route.get("abstained")
        or not state["kept_passages"]
        or not yes_no.applies(question, answer)
    ):
        return record, None  # (resettling: the graph that recorded it left it unsettled)
    quoted, settled = quote_yes_no(state, context, answer)  # as the graph settles it
    kept, grounding = ground(quoted, state, context)
    if kept is None:
        return record, settled
    citations = [s for s in grounding["sentences"] if s.get("supported")]
    grounding = {**(route.get("grounding") or {}), **grounding, "yes_no": settled}
    return {**record, "route": {**route, "grounding": grounding},
            "predictions": [{"text": kept, "citations": citations}]}, settled  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("predictions", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument(
        "--min-confidence", type=float, default=None, help="yes_no_min_confidence (default: Context's)"
    )
    parser.add_argument(
        "--quote-from", choices=yes_no.QUOTE_FROM, default=None, help="yes_no_quote_from (default: Context's)"
    )
    parser.add_argument(
        "--keep-no",
        choices=("true", "false"),
        default=None,
        help="yes_no_keep_no: a draft's 'No' stays before an unsure quote (default: Context's)",
    )
    parser.add_argument(
        "--resettle",
        action="store_true",
        help="settle again the answers the recording graph settled (their drafts)",
    )
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {}
    if args.min_confidence is not None:
        overrides["yes_no_min_confidence"] = args.min_confidence
    if args.quote_from is not None:
        overrides["yes_no_quote_from"] = args.quote_from
    if args.keep_no is not None:
        overrides["yes_no_keep_no"] = args.keep_no == "true"
    context = Context(**overrides)
    records = [json.loads(line) for line in args.predictions.read_text().splitlines() if line.strip()]
    settled_count, seconds = 0, []
    with args.output.open("w") as out:
        for record in records:
            start = time.perf_counter()
            new, settled = settled_record(record, context, resettle=args.resettle)
            if settled is not None:
                settled_count += 1
                seconds.append(time.perf_counter() - start)
                before = record["predictions"][0]["text"]
                print(f"{record['task_id']} [{settled.get('outcome')} p={settled.get('p')}]\n  before: {before[:160]}"
                      f"\n  after:  {new['predictions'][0]['text'][:240]}", file=sys.stderr)  # fmt: skip
            out.write(json.dumps(new, ensure_ascii=False) + "\n")
    mean = sum(seconds) / len(seconds) if seconds else 0.0
    print(f"{settled_count} of {len(records)} answers settled on a quote, {mean:.1f} s each", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
