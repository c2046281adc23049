"""The retried-answer check (``verify_retried_answers``) applied to a finished run, without re-running it.

For every answer of the run that only the decline retry wrote (``route.decline_retried``, not
abstained), the state the check reads is rebuilt from the record (the kept passages, by id, from the
prediction's ``contexts``; the selected history and the rewrites from the route) and the model is asked
the check's yes/no (``nodes.ground_answer.verify_answer``, the default Context's generate model). The
run is written again with each answer's ``route.grounding.verify``, as a run with the check on at
threshold 0 records it: ``retry_fit.py`` chooses a threshold from it, ``trust_variants.py
--verify-threshold T`` applies one.

    python -m research.verify_offline runs/taskc.jsonl -o runs/taskc-verify.jsonl
    python -m research.retry_fit --negatives runs/taskc-verify.jsonl --positives runs/taskb-verify.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.judging.answer_check import verify_answer
from research.trust_variants import kept_passages


def state_of(record: dict) -> dict:
    route = record.get("route") or {}
    return {
        "question": record["input"][-1]["text"],
        "kept_passages": kept_passages(record),
        "selected_history": route.get("selected_history") or [],
        "standalone_question": route.get("standalone_question"),
        "global_rewrite": route.get("global_rewrite"),
    }


def retried_answer(record: dict) -> bool:
    route = record.get("route") or {}
    return record.get("status") == "ok" and bool(route.get("decline_retried")) and not route.get("abstained")


def with_verify(record: dict, verify: dict) -> dict:
    route = record["route"]
    return {**record, "route": {**route, "grounding": {**(route.get("grounding") or {}), "verify": verify}}}


def annotate_run(
    rows: list[dict],
    output: Path,
    *,
    read: Callable[[dict], dict | None],
    wanted: Callable[[dict], bool],
    compute: Callable[[dict], dict],
    attach: Callable[[dict, dict], dict],
) -> int:
    """Write ``rows`` to ``output``, each ``wanted`` one with ``compute``'s result attached. Resumable:
    results already made are ``read`` back from the output, or from the partial file an interrupted run
    left (the output is written whole at the end). Returns how many results the output holds."""
    partial = output.with_name(output.name + ".partial")
    done: dict[str, dict] = {}
    for path in (output, partial):
        if path.exists():
            for record in map(json.loads, path.read_text().splitlines()):
                if (value := read(record)) is not None:
                    done[record["task_id"]] = value
    with partial.open("w") as out:
        for record in rows:
            if wanted(record):
                if record["task_id"] not in done:
                    done[record["task_id"]] = compute(record)
                record = attach(record, done[record["task_id"]])
            out.write(json.dumps(record) + "\n")
            out.flush()
    partial.replace(output)
    return len(done)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="the run with the check's record (resumed)"
    )
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.run.read_text().splitlines() if line.strip()]
    context = Context(verify_threshold=0.0)  # record, keep every answer
    checked = annotate_run(
        rows,
        args.output,
        read=lambda r: ((r.get("route") or {}).get("grounding") or {}).get("verify"),
        wanted=retried_answer,
        compute=lambda r: verify_answer(state_of(r), context, r["predictions"][0]["text"]),
        attach=with_verify,
    )
    print(f"{args.output}: {len(rows)} tasks, {checked} retried answers checked")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
