"""Which recorded answers are in general terms the passages do not use, and what declining them would do.

Reads a run: an MTRAG predictions file (``mtrag-graph answer``) or a real-documents run folder
(``python -m benchmarks.real_documents``: ``predictions.jsonl`` and ``verdicts.jsonl``). For every answer
the run gave (no decline, no question asked back) it applies ``general_terms`` (below: the draft check's
rule until 2026-12-06) against the passages the answer was written from and counts the answers it fires
on by class (MTRAG answerability; real documents: right, wrong, unanswerable). With ``-o`` it writes the run with those answers replaced
by the decline (``abstain_reason`` "general_terms"): what the rule gave when its retry
declines too, for ``mtrag-graph evaluate --compare``. The graph itself retries once first, so its figure
comes from answering the fired tasks again (``--tasks`` writes them)::

    python -m research.general_terms_offline runs/t-ua-C.jsonl -o runs/t-ua-gt-offline.jsonl --tasks runs/t-ua-gt-tasks.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.tasks import answerability_of
from research import decline_samples

TASK_KEYS = ("predictions", "route", "status", "reference_contexts")

# words a small model writes when it answers from what it knows in general rather than from the passages
# ("The time it takes ... can vary depending on several factors ... In general, ..."; "you can consider
# ..."); a passage that uses them itself ("typically 30 seconds") lets the answer repeat them. Not "it is
# possible to ...": that is how a yes is worded ("It is possible to reverse or stretch an axis", right on
# the real-documents fresh split). Read off MTRAG-UN dev Task C's answers; the product's draft check
# used it until 2026-12-06 (benchmarks/results/answers.md: it fired on 75 of 777 MTRAG people's answers).
_GENERAL_TERMS = re.compile(
    r"\b(?:can vary|may vary|varies depending|vary depending"
    r"|depending on (?:several|various|many|the specific|a number of)"
    r"|(?:several|various|many|a number of) factors|in general|generally|typically|usually"
    r"|it is (?:important|recommended|advisable|a good idea) to|you (?:can|may|should|might|could) (?:also )?consider"
    r"|there are (?:several|many|various) (?:ways|options|steps)|some common)\b",
    re.IGNORECASE,
)


def general_terms(answer: str, passages: Sequence[str]) -> list[str]:
    """The general terms of ``answer`` ("can vary depending on several factors", "typically", "you can
    consider") that none of ``passages`` uses: the marks of an answer written from what the model knows."""
    used = " ".join(" ".join(p.split()).lower() for p in passages)
    found = [" ".join(m.group(0).split()).lower() for m in _GENERAL_TERMS.finditer(answer)]
    return sorted({term for term in found if term not in used})


def read_run(run: Path) -> Iterator[tuple[dict[str, Any], str]] | None:
    """Each record of ``run`` with its class; None (and why, on stderr) for a folder missing a file."""
    if not run.is_dir():
        return ((r, answerability_of(r) or "unlabelled") for r in map(json.loads, run.open()))
    read = decline_samples.read_run(run)
    if read is None:
        return None
    records, verdicts = read
    labels = {
        v["task_id"]: ("right" if v["right"] else "wrong") if v["answerable"] else "UNANSWERABLE"
        for v in verdicts
    }
    return ((record, labels[task_id]) for task_id, record in records.items())


def answered(record: dict[str, Any]) -> bool:
    route = record.get("route") or {}
    return not route.get("abstain_reason") and not (route.get("clarification") or {}).get("asked")


def fired(record: dict[str, Any]) -> list[str]:
    passages = [str(p.get("text", "")) for p in record.get("contexts") or []]
    return general_terms(record["predictions"][0]["text"], passages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="predictions file or real-documents run folder")
    parser.add_argument("-o", "--output", type=Path, help="the run with the fired answers declined")
    parser.add_argument("--tasks", type=Path, help="the fired tasks, as tasks to answer again")
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    idk = Context().idk_answer
    run = read_run(args.run)
    if run is None:
        return 2
    for record, label in run:
        if answered(record):
            counts[label] += 1
            terms = fired(record)
            if terms:
                hits[label] += 1
                print(f"{label:13} {record['task_id']}: {terms} | {record['predictions'][0]['text'][:150]!r}")
                tasks.append({k: v for k, v in record.items() if k not in TASK_KEYS})
                route = {**record["route"], "abstain_reason": "general_terms", "abstained": True}
                record = {**record, "predictions": [{"text": idk}], "route": route}
        out.append(record)
    for label in sorted(counts):
        print(f"{label}: {hits[label]} of {counts[label]} answers in general terms")
    if args.output:
        args.output.write_text("".join(json.dumps(r) + "\n" for r in out))
    if args.tasks:
        args.tasks.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
