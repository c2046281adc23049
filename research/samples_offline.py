"""A run recorded with answer samples that never act, as the run that ``samples_needed`` would have given.

A run with ``answer_samples`` K and ``samples_needed`` above K (the preset ``runs/samples-record.json`` of
benchmarks/results/documents.md) answers exactly as the default would, and records in each route which
samples disagreed (``grounding.samples.disagree``). This writes its predictions again with the rule
applied: an answer with at least ``--needed`` disagreeing samples becomes the "I don't know" the graph
gives (``abstain_reason: model_unsure``). One recorded run then scores every rule, and the rule's run
against the run without it (``mtrag-graph evaluate --compare``, or ``benchmarks.real_documents
--score-only`` on a folder holding the rewritten predictions).

    python -m research.samples_offline runs/devC-rec.jsonl --needed 2 --threshold 0.05 --compute-decline -o runs/devC-n2.jsonl

``--compute-decline``: a run recorded before the samples' decline probability was (its prompt rebuilt from
the record, the evidence excerpts recomputed: ``research.decline_samples.task_state``); the output keeps it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import decline_probability, sample_disagreements
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.prompts.build import question_for_answering, sample_messages
from mtrag_graph.state import AbstainReason
from research.decline_samples import task_state


def disagreements(record: dict[str, Any]) -> list[str] | None:
    """The recorded samples' disagreements with the answer, judged again by today's rule
    (``judging.decline.sample_disagreements``); None when the run drew no samples for it."""
    route = record.get("route") or {}
    samples = (route.get("grounding") or {}).get("samples")
    if not samples:
        return None
    question = question_for_answering({**route, "question": record["input"][-1]["text"]})
    return sample_disagreements(record["predictions"][0]["text"], samples.get("replies") or [], question)


def apply_rule(
    record: dict[str, Any],
    needed: int,
    idk: str,
    threshold: float | None = None,
    p_decline: float | None = None,
) -> dict[str, Any]:
    """The record as the graph with ``samples_needed = needed`` (and ``sample_decline_threshold =
    threshold``, read against ``p_decline`` or the recorded one) would have written it."""
    route = record.get("route") or {}
    found = disagreements(record)
    if found is None or route.get("abstain_reason"):
        return record
    if p_decline is None:
        p_decline = ((route.get("grounding") or {}).get("samples") or {}).get("p_decline")
    unsure = threshold is not None and p_decline is not None and p_decline >= threshold
    if len(found) < needed and not unsure:
        return record
    route = {**route, "abstain_reason": AbstainReason.MODEL_UNSURE.value, "abstained": True}
    return {**record, "route": route, "predictions": [{"text": idk, "citations": []}]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("predictions", type=Path, help="predictions recorded with samples that never act")
    parser.add_argument("--needed", type=int, required=True, help="disagreeing samples that make a decline")
    parser.add_argument("--threshold", type=float, default=None, help="sample_decline_threshold (None: off)")
    parser.add_argument(
        "--compute-decline",
        action="store_true",
        help="compute the samples' prompt decline probability with the model where the run did not record it",
    )
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    context = Context()
    idk = context.idk_answer
    changed = total = 0
    embed = get_embedder(context.embedder).embed if args.compute_decline else None
    with open(args.output, "w", encoding="utf-8") as out:
        for line in args.predictions.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            p_decline = None
            samples = ((record.get("route") or {}).get("grounding") or {}).get("samples")
            if args.compute_decline and samples and samples.get("p_decline") is None:
                state = task_state(record, context, embed)
                p_decline = decline_probability(
                    get_chat_model(context.generate_model), sample_messages(state, context)
                )
                samples["p_decline"] = p_decline
            rewritten = apply_rule(record, args.needed, idk, args.threshold, p_decline)
            changed += rewritten is not record
            total += 1
            out.write(json.dumps(rewritten, ensure_ascii=False) + "\n")
    print(f"{changed} of {total} answers became declines (samples_needed {args.needed})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
