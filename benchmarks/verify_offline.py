"""The retried-answer check (``verify_retried_answers``) applied to a finished run, without re-running it.

For every answer of the run that only the decline retry wrote (``route.decline_retried``, not
abstained), the state the check reads is rebuilt from the record (the kept passages, by id, from the
prediction's ``contexts``; the selected history and the rewrites from the route) and the model is asked
the check's yes/no (``nodes.ground_answer.verify_answer``, the default Context's generate model). The
yes-probabilities go to a JSON-lines file that ``--apply`` turns into the run as a threshold leaves it.

    python benchmarks/verify_offline.py runs/taskc.jsonl -o runs/taskc-verify-p.jsonl
    python benchmarks/verify_offline.py runs/taskc.jsonl -o runs/taskc-verify-p.jsonl --apply 0.5 --write runs/taskc-verified.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.nodes.ground_answer import verify_answer


def state_of(record: dict) -> dict:
    route = record.get("route") or {}
    by_id = {p.get("document_id"): p for p in record.get("contexts") or []}
    kept = [
        by_id[p["document_id"]] for p in route.get("kept_passages") or [] if p.get("document_id") in by_id
    ]
    return {
        "question": record["input"][-1]["text"],
        "kept_passages": kept,
        "selected_history": route.get("selected_history") or [],
        "standalone_question": route.get("standalone_question"),
        "global_rewrite": route.get("global_rewrite"),
    }


def retried_answers(rows: list[dict]) -> list[dict]:
    return [
        r
        for r in rows
        if r.get("status") == "ok"
        and (r.get("route") or {}).get("decline_retried")
        and not r["route"].get("abstained")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True, help="yes-probabilities (resumed)")
    parser.add_argument("--apply", type=float, metavar="T", help="threshold to apply to the run")
    parser.add_argument("--write", type=Path, help="with --apply: the run as that threshold leaves it")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.run.read_text().splitlines() if line.strip()]
    done = {}
    if args.output.exists():
        done = {d["task_id"]: d for d in map(json.loads, args.output.read_text().splitlines()) if d}
    context = Context()
    with args.output.open("a") as out:
        for record in retried_answers(rows):
            if record["task_id"] in done:
                continue
            verified = verify_answer(state_of(record), context, record["predictions"][0]["text"])
            entry = {"task_id": record["task_id"], "label": record["answerability"][0], **verified}
            out.write(json.dumps(entry) + "\n")
            out.flush()
            done[record["task_id"]] = entry
    by_label: dict[str, list[float]] = defaultdict(list)
    for entry in done.values():
        if entry.get("p_yes") is not None:
            by_label[entry["label"]].append(entry["p_yes"])
    print("| class | retried answers | p_yes < 0.5 | p_yes values |\n|---|---|---|---|")
    for label, values in sorted(by_label.items()):
        shown = ", ".join(f"{v:.2f}" for v in sorted(values))
        print(f"| {label} | {len(values)} | {sum(v < 0.5 for v in values)} | {shown} |")
    if args.apply is not None and args.write:
        idk = context.idk_answer
        with args.write.open("w") as out:
            for record in rows:
                entry = done.get(record["task_id"])
                if entry and entry.get("p_yes") is not None and entry["p_yes"] < args.apply:
                    route = {**record["route"], "abstain_reason": "unverified", "abstained": True}
                    record = {**record, "predictions": [{"text": idk}], "route": route}
                out.write(json.dumps(record) + "\n")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
