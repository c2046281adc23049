"""The reference-writer benchmark: does what people wrote pass through the pipeline unspoiled?

The writer is replaced by one that returns the task's reference answer (the answer people wrote for
it); every other call is as shipped (clarify, rewrite, relation, gate, the acceptance checks with the
bundled models). A stronger model than the bundled one writes answers like the people's: whatever the
layer around the writer does to them, it would do to that model's answers too.

Each answerable or partial task with reference passages is run once and its reply sorted into one
outcome:

- ``whole``: the reply is the reference (white space aside);
- ``whole+quote``: the reference whole, with a quoted passage line added;
- ``cut``: only sentences (or a leading yes or no) of the reference are left;
- ``turned_over``: the reference leads with yes (no) and the reply with no (yes);
- ``rewritten``: anything else that is an answer;
- ``declined``: the run abstained (by its reason);
- ``asked_back``: a clarifying question instead of the answer;
- ``asked_back_as_people``: a clarifying question where the people's answer opens with one too ("Can you be
  more specific about which novel you are looking for?": one turn of the dev slice, none of MTRAG's 777 or
  the tuning slice's 36); the pipeline did what people did, so it is no answer spoiled, and the table
  counts it apart from ``asked_back``.

    python -m benchmarks.reference_writer TASKS.jsonl -o runs/refwriter-NAME [--sample N] [--preset P]
    python -m benchmarks.reference_writer runs/rd-tuning/tasks.jsonl -o RUN --retrieve --index INDEX_DIR

``--retrieve``: the passages are retrieved from ``--index`` for every task, as in full RAG, so tasks without
reference passages are run too (a real-documents run's ``tasks.jsonl``, whose reference answers are the
set's; its index is the run's ``~/.cache/mtrag-graph/real-documents/index-SPLIT``).

Resumable (the records file is appended to); ``--score-only`` prints the table of what is there. The
reply cache (``MTRAG_LLM_CACHE=FILE``) makes a rerun after a change to the acceptance layer cost only the
calls that changed. Data: ``../shared/data/mtrag/tasks/mtrag_reference.jsonl`` (tuning: MTRAG's own
conversations) and ``tasks/mtragun_dev.jsonl`` (report, read once).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import hashlib
import json
import re
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ANSWERED = ("ANSWERABLE", "PARTIAL")
OUTCOMES = (
    "whole", "whole+quote", "cut", "turned_over", "rewritten", "declined", "asked_back",
    "asked_back_as_people", "failed",
)  # fmt: skip
# what the acceptance layer adds when it quotes a passage (judging.yes_no.QUOTE, judging.commands)
QUOTE_OPENER = "The document says:"
_LEADING_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def squeeze(text: str) -> str:
    return " ".join(str(text).split())


def leading_yes_no(text: str) -> str | None:
    match = _LEADING_YES_NO.match(text)
    return match.group(1).lower() if match else None


def _pieces(text: str) -> list[str]:
    """The sentences of ``text``, white space squeezed (what a cut may leave of it)."""
    return [p for p in _SENTENCE_END.split(squeeze(text)) if p]


def _without_quote(text: str) -> str:
    at = text.find(QUOTE_OPENER)
    return text[:at].strip() if at >= 0 else text


def outcome_of(reference: str, reply: str, kind: str) -> str:
    """The outcome of one task: the reply (``kind``: ``answer``, ``abstention`` or ``clarifying_question``,
    as ``nodes.finish.reply_kind`` says) against the ``reference`` the writer returned."""
    if kind == "clarifying_question":
        return "asked_back_as_people" if asks_back(reference) else "asked_back"
    if kind == "abstention":
        return "declined"
    ref, got = squeeze(reference), squeeze(reply)
    if got == ref:
        return "whole"
    said, asked = leading_yes_no(ref), leading_yes_no(got)
    if said and asked and said != asked:
        return "turned_over"
    if ref in got and QUOTE_OPENER in got.replace(ref, " "):
        return "whole+quote"
    body = squeeze(_without_quote(got))
    if body and len(body) < len(ref) and _is_cut_of(ref, body):
        return "cut"
    return "rewritten"


def asks_back(reference: str) -> bool:
    """Does the people's answer open with a question to the user (its first sentence ends with "?")?"""
    pieces = _pieces(reference)
    return bool(pieces) and pieces[0].endswith("?")


def _is_cut_of(reference: str, body: str) -> bool:
    """Is every sentence of ``body`` a sentence of ``reference`` (or one with its yes or no taken off)?"""
    lowered = reference.lower()
    for sentence in _pieces(body):
        key = sentence.lower().strip()
        if key and key not in lowered:
            return False
    return True


def eligible(task: Mapping[str, Any], retrieve: bool = False) -> bool:
    """An answerable or partial task with a reference answer, and reference passages unless retrieved."""
    label = (task.get("answerability") or task.get("Answerability") or [""])[0]
    targets = task.get("targets") or []
    passages = retrieve or bool(task.get("contexts"))
    return label in ANSWERED and passages and bool(targets and targets[0].get("text"))


def sample_tasks(
    tasks: Iterable[Mapping[str, Any]], size: int | None, retrieve: bool = False
) -> list[dict[str, Any]]:
    """The eligible tasks; with ``size``, that many picked by a hash of the task id (the same ones every
    run, spread over the conversations and domains), in file order."""
    rows = [dict(t) for t in tasks if eligible(t, retrieve)]
    if size is None or size >= len(rows):
        return rows
    ranked = sorted(rows, key=lambda t: hashlib.sha256(str(t["task_id"]).encode()).hexdigest())
    chosen = {t["task_id"] for t in ranked[:size]}
    return [t for t in rows if t["task_id"] in chosen]


def reference_of(task: Mapping[str, Any]) -> str:
    return str(task["targets"][0]["text"]).strip()


def writer_context(base: Any, reference: str) -> Any:
    """``base`` with the writer (the one answer candidate) replaced by a model that returns ``reference``;
    the other model settings (the gate's, the checks' ``generate_model``) are untouched."""
    from mtrag_graph.models.fake import ScriptedChatModel
    from mtrag_graph.stages.candidates import Candidate

    writer = ScriptedChatModel(responses=[reference], model_name="reference-writer")
    return dataclasses.replace(base, candidates=(Candidate(model=writer, name="reference"),))


def changes_of(state: Mapping[str, Any]) -> dict[str, Any]:
    """What the acceptance layer recorded about the reply: why it retried, declined or cut."""
    grounding = state.get("grounding") or {}
    dropped = [
        {"sentence": s.get("text"), "missing": s.get("unsupported_facts"), "score": s.get("score")}
        for s in grounding.get("sentences") or []
        if not s.get("supported", True)
    ]
    return {
        "abstain_reason": None if state.get("abstain_reason") is None else str(state["abstain_reason"]),
        "retries": state.get("retries", 0),
        "problems": [d.get("problems") for d in state.get("rejected_drafts") or []],
        "dropped": dropped,
        "yes_no": (grounding.get("yes_no") or {}).get("outcome"),
        "command_quote": bool(grounding.get("command_quote")),
        "verdict": state.get("verdict"),
        "gate": state.get("gate"),
        "gate_score": (state.get("gate_evidence") or {}).get("score"),
    }


def run_task(graph: Any, task: dict[str, Any], base: Any, retrieve: bool = False) -> dict[str, Any]:
    from mtrag_graph.nodes.finish import reply_kind

    reference = reference_of(task)
    started = time.perf_counter()
    inputs = {"task": task, "retrieve": True} if retrieve else {"task": task}
    state = graph.invoke(inputs, context=writer_context(base, reference))
    reply = str(state["messages"][-1].content)
    kind = reply_kind(state)
    return {
        "task_id": task["task_id"],
        "answerability": (task.get("answerability") or task.get("Answerability") or ["?"])[0],
        "reference": reference,
        "reply": reply,
        "kind": kind,
        "outcome": outcome_of(reference, reply, kind),
        "changes": changes_of(state),
        "seconds": round(time.perf_counter() - started, 2),
    }


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(records: Sequence[Mapping[str, Any]]) -> str:
    """Outcome counts and shares, declines by reason; the bars of issue 73 beside them."""
    counts = collections.Counter(r["outcome"] for r in records)
    total = len(records) or 1
    lines = ["| outcome | tasks | share |", "|---|---|---|"]
    for outcome in OUTCOMES:
        if counts[outcome] or outcome in ("whole", "whole+quote", "turned_over", "declined", "asked_back"):
            lines.append(f"| {outcome} | {counts[outcome]} | {100 * counts[outcome] / total:.1f}% |")
    kept = counts["whole"] + counts["whole+quote"]
    lines.append(
        f"| **whole or whole+quote** | **{kept} of {len(records)}** | **{100 * kept / total:.1f}%** |"
    )
    reasons = collections.Counter(
        r["changes"].get("abstain_reason") or "?" for r in records if r["outcome"] == "declined"
    )
    if reasons:
        lines.append("")
        lines.append("Declined by reason: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    seconds = sorted(r.get("seconds", 0.0) for r in records if r["outcome"] != "failed")
    if seconds:
        lines.append(f"\nMedian seconds a task: {seconds[len(seconds) // 2]:.1f}")
    return "\n".join(lines)


def damaged(records: Sequence[Mapping[str, Any]]) -> str:
    """Every task not kept whole: what the reference was, what reached the user, and why."""
    rows = ["| task | outcome | reference | reply | why |", "|---|---|---|---|---|"]

    def cell(text: Any, limit: int = 160) -> str:
        flat = squeeze(str(text or "")).replace("|", "\\|")
        return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"

    for r in records:
        if r["outcome"] in ("whole", "whole+quote"):
            continue
        changes = r.get("changes") or {}
        why = changes.get("abstain_reason") or ""
        if changes.get("dropped"):
            why += " dropped: " + "; ".join(str(d.get("missing")) for d in changes["dropped"])
        if changes.get("yes_no"):
            why += f" yes/no: {changes['yes_no']}"
        if any(changes.get("problems") or []):
            why += f" problems: {changes['problems']}"
        rows.append(
            f"| {r['task_id']} | {r['outcome']} | {cell(r['reference'])} | {cell(r['reply'])} | {cell(why, 200)} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reference_writer", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("tasks", help="a tasks file (MTRAG or MTRAG-UN, reference passages)")
    parser.add_argument("-o", "--output", required=True, help="run folder (records.jsonl, table.md)")
    parser.add_argument(
        "--sample", type=int, default=None, help="only this many eligible tasks (by task-id hash)"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N of the chosen tasks")
    parser.add_argument("--preset", default=None, help="a preset instead of the default pipeline")
    parser.add_argument("--score-only", action="store_true", help="print the table of what is recorded")
    parser.add_argument(
        "--retrieve", action="store_true", help="retrieve every task's passages from --index (full RAG)"
    )
    parser.add_argument("--index", default=None, help="the index --retrieve searches")
    args = parser.parse_args(argv)
    if args.retrieve and not args.index:
        parser.error("--retrieve needs --index (the index its passages come from)")

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    records_path = out / "records.jsonl"
    if not args.score_only:
        from mtrag_graph.context import Context
        from mtrag_graph.graph import build_graph
        from mtrag_graph.tasks import read_jsonl

        try:
            rows = [
                raw for _, raw, error in read_jsonl(args.tasks) if error is None and isinstance(raw, dict)
            ]
        except OSError as error:
            print(f"error: {args.tasks}: {error}", file=sys.stderr)
            return 2
        tasks = sample_tasks(rows, args.sample, args.retrieve)[: args.limit]
        base = Context.from_preset(args.preset)
        if args.retrieve:
            base = dataclasses.replace(base, index_dir=args.index)
        graph = build_graph(output="state")
        done = {r["task_id"] for r in read_records(records_path)}
        with records_path.open("a", encoding="utf-8") as handle:
            for i, task in enumerate(tasks, 1):
                if task["task_id"] in done:
                    continue
                try:
                    record = run_task(graph, task, base, args.retrieve)
                except Exception as failure:  # noqa: BLE001 - one task's crash must not end the run
                    record = {"task_id": task["task_id"], "outcome": "failed", "changes": {},
                              "reference": reference_of(task), "reply": f"{type(failure).__name__}: {failure}"}  # fmt: skip
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                print(f"[{i}/{len(tasks)}] {task['task_id']}: {record['outcome']}", file=sys.stderr)
    records = read_records(records_path)
    body = table(records)
    (out / "table.md").write_text(body + "\n\n" + damaged(records) + "\n", encoding="utf-8")
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
