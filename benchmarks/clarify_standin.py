"""The clarify decision on the tuning data in both settings, model-free.

`mtrag-graph decisions --only clarify` gives every item its reference passages (the Task B setting);
the tuning split has no retrieved passages. Here the Task C setting has a model-free stand-in: BM25's
top 5 over an index (the query is the previous user turn and the question, no rewrite model), the same
for every class. For the tuning split's turns and the twin set (`mtrag-graph clarify-twins`), the share
clarified per class and the signal that decided.

    python benchmarks/clarify_standin.py --data $MTRAG_DATA --twins runs/clarify-twins.jsonl --index indexes/mini
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.nodes.clarify import SIGNALS, is_underspecified
from mtrag_graph.retrieval.index import PassageIndex, index_for
from mtrag_graph.retrieval.search import bm25_ranking
from mtrag_graph.tasks import answerability_of, domain_of, parse_task

TOP_K = 5


def rows(data: Path, twins: Path) -> list[tuple[str, dict]]:
    """(class, raw task) for the tuning split's turns and the twins (TWIN-U underspecified, TWIN-A not)."""
    out = []
    for path, is_twin in ((data / "tasks" / "mtrag_reference.jsonl", False), (twins, True)):
        for line in path.read_text().splitlines():
            raw = json.loads(line)
            label = str(answerability_of(raw))
            if is_twin:
                label = "TWIN-U" if raw["task_id"].startswith("twin-under") else "TWIN-A"
                label += f" {raw['twin'].get('form', 'name')}"
            out.append((label, raw))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--twins", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--without", action="append", default=[], choices=SIGNALS, help="switch a signal off")
    parser.add_argument(
        "--with", dest="with_", action="append", default=[], choices=SIGNALS, help="switch one on"
    )
    args = parser.parse_args(argv)
    on = [*Context().clarify_signals, *args.with_]
    context = Context(clarify_signals=tuple(s for s in SIGNALS if s in on and s not in args.without))
    indexes: dict[str, PassageIndex] = {}
    for setting in ("B", "C (BM25 stand-in)"):
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        signals: Counter = Counter()
        for label, raw in rows(args.data, args.twins):
            task = parse_task(raw)
            history = [turn.model_dump() for turn in task.history]
            if setting == "B":
                given = task.passages
                passages = None if given is None else [p.model_dump(exclude={"score"}) for p in given]
            else:
                domain = domain_of(task.collection) or "unknown"
                index = indexes.setdefault(domain, index_for(str(args.index), domain))
                users = [t["text"] for t in history if t["speaker"] == "user"]
                hits = bm25_ranking(index, " ".join([*users[-1:], task.question]), TOP_K)
                passages = [
                    {"document_id": index.ids[i], "title": index.titles[i], "text": index.texts[i]}
                    for i, _ in hits
                ]
            decision, evidence = is_underspecified(
                history, task.question, passages, context, retrieved=setting != "B"
            )
            counts[label][1] += 1
            if decision:
                counts[label][0] += 1
                signals[evidence[-1].split(":")[0]] += 1
        print(f"\n{setting}\n| class | clarified |\n|---|---|")
        for label, (asked, n) in sorted(counts.items()):
            print(f"| {label} | {asked}/{n} ({asked / n:.1%}) |")
        print(f"signals: {dict(signals)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
