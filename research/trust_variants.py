"""The same run without the grounding check, and without the decline retry, from its own routes.

The grounding check is the last node and model-free: a run's route keeps the answer before it
(``grounding.answer_before``), so the run without the check is that answer, task for task, with every
model call the same. A run without the decline retry is the run where every retried decline stands
(``decline_retried``: the retry's answer is replaced by the "I don't know"). ``grounded`` is the run with
the check as this code makes it (threshold and rules), from the same answers; with ``--clarified-from``,
``grounded-clarify`` puts a ``--clarify`` run's clarifying questions in the turns it asked about; with
``--reclarify``, ``grounded-reclarify`` (and ``verified-T-reclarify``) puts the questions this code's clarify node asks on the run's
own passages (model-free: the decision and the question naming the passages' alternatives need no
model call; a turn whose question would need the model is an error). All
come from one run, so they are paired with it exactly; ``evaluate --compare`` then gives paired bootstrap intervals.

    python -m research.trust_variants runs/taskc.jsonl -o runs/variants [--clarified-from runs/taskc-clarify.jsonl]
    mtrag-graph evaluate --compare runs/variants/taskc-no-grounding.jsonl runs/taskc.jsonl --ratings fitted -o runs/cmp-c
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from mtrag_graph.context import Context
from mtrag_graph.judging.grounding import SentenceSupport, grounded_answer, sentence_support, support_entries
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.nodes.clarify import clarifying_question, signal_of
from mtrag_graph.prompts import clarify as clarify_prompts
from mtrag_graph.prompts.build import format_conversation
from mtrag_graph.tasks import parse_task


def without_grounding(record: dict) -> dict:
    grounding = (record.get("route") or {}).get("grounding") or {}
    before = grounding.get("answer_before")
    if before is None:
        return record
    route = {**record["route"]}
    if route.get("abstain_reason") == "ungrounded":
        route["abstain_reason"], route["abstained"] = None, False
    return {**record, "predictions": [{"text": before}], "route": route}


def kept_passages(record: dict) -> list[dict]:
    """The passages the run's answer was written from: the route's kept ids, from the record's contexts."""
    by_id = {p.get("document_id"): p for p in record.get("contexts") or []}
    ids = [p.get("document_id") for p in (record.get("route") or {}).get("kept_passages") or []]
    return [by_id[i] for i in ids if i in by_id]


def checked(record: dict, answer: str, context: Context) -> tuple[str | None, list[SentenceSupport]]:
    """``answer`` through this code's grounding check, against the record's kept passages and
    conversation: what the check lets through (None: the graph abstains) and the per-sentence support."""
    turns = record.get("input") or []
    support = sentence_support(
        answer,
        [p.get("text", "") for p in kept_passages(record)],
        format_conversation(turns[:-1]),
        context.grounding_min_support,
        question=turns[-1]["text"] if turns else "",
    )
    return grounded_answer(answer, support), support


def regrounded(record: dict, context: Context) -> dict:
    """The run's answer before the check, checked again with this code's grounding (``context``'s
    threshold): a run made before a change to the check is scored as the graph now answers."""
    route = record.get("route") or {}
    before = (route.get("grounding") or {}).get("answer_before")
    if before is None:
        return record
    kept, support = checked(record, before, context)
    grounding = {**route["grounding"], "sentences": support_entries(support, kept_passages(record)),
                 "dropped": sum(not s.supported for s in support), "min_support": context.grounding_min_support}  # fmt: skip
    text, reason = (context.idk_answer, "ungrounded") if kept is None else (kept, None)
    route = {**route, "grounding": grounding, "abstain_reason": reason, "abstained": reason is not None}
    return {**record, "predictions": [{"text": text}], "route": route}


def without_decline_retry(record: dict, idk: str) -> dict:
    route = record.get("route") or {}
    if not route.get("decline_retried"):
        return record
    return {
        **record,
        "predictions": [{"text": idk}],
        "route": {**route, "abstain_reason": "generator_declined", "abstained": True},
    }


def verified(record: dict, threshold: float, idk: str) -> dict:
    """The run as ``verify_threshold=threshold`` would have left it: a retried answer whose recorded
    yes-probability (``grounding.verify.p_yes``, from a run with the verification on) is below it
    becomes the "I don't know". A run that recorded no probability is left as it is."""
    route = record.get("route") or {}
    verify = (route.get("grounding") or {}).get("verify") or {}
    p_yes = verify.get("p_yes")
    if p_yes is None or route.get("abstained") and route.get("abstain_reason") != "unverified":
        return record
    if p_yes >= threshold:
        route = {**route, "abstain_reason": None, "abstained": False}
        return {**record, "predictions": [{"text": verify["answer"]}], "route": route}
    return {
        **record,
        "predictions": [{"text": idk}],
        "route": {**route, "abstain_reason": "unverified", "abstained": True},
    }


def with_clarifications(record: dict, clarified: dict[str, dict]) -> dict:
    """The record of a ``--clarify`` run where that run asked a clarifying question, else this one's:
    the clarify node decides before any answer is written (model-free), so the other turns are this
    run's answers, task for task."""
    other = clarified.get(record["task_id"])
    asked = other is not None and ((other.get("route") or {}).get("clarification") or {}).get("asked")
    if other is not None and asked:
        return other
    return record


def reclarified(record: dict, context: Context) -> dict:
    """The record as this code's clarify node leaves it: its question when the node asks one about the
    record's passages (the given ones in Task B, the kept retrieved ones in Task C: the run's
    ``contexts``), else the record unchanged."""
    task = parse_task({k: v for k, v in record.items() if k not in ("predictions", "route")})
    history = [turn.model_dump() for turn in task.history]
    passages = [{k: v for k, v in p.items() if k != "score"} for p in record.get("contexts") or []]
    retrieved = "reference_contexts" in record  # a Task C run: its contexts are the kept retrieved passages
    decision, evidence = is_underspecified(history, task.question, passages, context, retrieved=retrieved)
    if not decision:
        return record
    state = {"history": history, "question": task.question, "passages": passages}
    question = clarifying_question(state, context, decided_by=signal_of(evidence))
    if question == clarify_prompts.FALLBACK:  # the scripted model's reply was used
        raise ValueError(
            f"task {record['task_id']}: the question needs the clarify model; run with --clarify"
        )
    route = {**(record.get("route") or {}), "abstained": False, "abstain_reason": None,
             "clarification": {"asked": True, "question": question, "evidence": evidence[-1]}}  # fmt: skip
    return {**record, "predictions": [{"text": question}], "route": route}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions")
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    parser.add_argument(
        "--verify-threshold", type=float, action="append", default=[], metavar="T",
        help="also write the run as verify_threshold=T leaves it (needs a run that recorded grounding.verify)",
    )  # fmt: skip
    parser.add_argument(
        "--clarified-from", type=Path, metavar="RUN",
        help="a --clarify run of the same tasks: also write the grounded run with its clarifying questions",
    )  # fmt: skip
    parser.add_argument(
        "--reclarify", action="store_true",
        help="also write the grounded run with the questions this code's clarify node asks (model-free)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in Path(args.predictions).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("status") == "ok"]
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(args.predictions).stem
    context = Context(rewrite_model="scripted:x", classify_model="scripted:x", gate_model="scripted:x",
                      generate_model="scripted:x", clarify_model="scripted:x", judge_model="scripted:x")  # fmt: skip
    run, rows = rows, [regrounded(r, context) for r in rows]
    variants = {
        "grounded": rows,
        "no-grounding": [without_grounding(r) for r in rows],
        "no-decline-retry": [without_decline_retry(r, context.idk_answer) for r in rows],
        "no-grounding-no-decline-retry": [
            without_decline_retry(without_grounding(r), context.idk_answer) for r in rows
        ],
    }
    for threshold in args.verify_threshold:
        variants[f"verified-{threshold:g}"] = [verified(r, threshold, context.idk_answer) for r in rows]
    if args.clarified_from:
        clarified = {
            r["task_id"]: r for r in map(json.loads, args.clarified_from.read_text().splitlines()) if r
        }
        variants["grounded-clarify"] = [with_clarifications(r, clarified) for r in rows]
    if args.reclarify:  # clarify decides before any answer is written: its question wins
        for name in [n for n in variants if n == "grounded" or n.startswith("verified-")]:
            variants[f"{name}-reclarify"] = [reclarified(r, context) for r in variants[name]]
    for name, records in variants.items():
        path = out / f"{stem}-{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        changed = sum(
            a["predictions"][0]["text"] != b["predictions"][0]["text"]
            for a, b in zip(run, records, strict=True)
        )
        print(f"{path}: {len(records)} tasks, {changed} answers differ from the run")
    outcome: Counter = Counter()
    for r in rows:
        route = r.get("route") or {}
        label = (r.get("answerability") or ["?"])[0]
        grounding = route.get("grounding") or {}
        if route.get("abstain_reason") == "ungrounded":
            outcome[(label, "abstained: ungrounded")] += 1
        elif grounding.get("dropped"):
            outcome[(label, "sentences cut")] += 1
        if route.get("decline_retried"):
            outcome[(label, "decline retried")] += 1
    print("\n| class | what the check / retry did | tasks |\n|---|---|---|")
    for (label, what), n in sorted(outcome.items()):
        print(f"| {label} | {what} | {n} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
