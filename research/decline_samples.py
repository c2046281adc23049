"""Does the answering model know when it is making an answer up? Samples and decline probabilities per task.

For every task of a real-documents run (what ``python -m benchmarks.real_documents`` wrote) that kept
passages, the answer prompt is rebuilt as the run saw it (its standalone question, selected history, kept
passages and their evidence excerpts recomputed at the default budget), in two forms:

- ``grounded``: the graph's prompt with the instruction that offers "I don't know"
  (``prompts.build.decline_messages``, the probability the decision benchmark records at the gate);
- ``plain``: the rewritten question and the kept passages whole, no conversation (issue 47's probe);
- ``grounded-neutral``: the graph's prompt with that plain instruction;
- ``sample``: the graph's prompt with the answer samples' instruction and token limit
  (``Context.sample_instruction``: "Answer in a few words ...");
- ``neutral``: as ``plain``, with a plain instruction ("Answer ... If they do not contain the answer, say
  that you don't know.") instead of the graph's.

For each: the first-token decline probability (``judging.decline.decline_probability``), and, with
``--samples K``, K replies sampled at ``--temperature``: how many decline, and how many disagree with the
run's answer (``judging.decline.sample_disagreements``: a decline, or none of the answer's facts). The table puts the tasks in
three rows (unanswerable; answerable answered right; answerable not right) and sweeps a threshold on each
signal (the decline probability; the number of disagreeing samples, over the tasks the run answered):
unanswerable declined against right answers lost.

    python -m research.decline_samples runs/rd-tuning-A -o runs/decline-A.jsonl [--samples 5] [--prompts grounded plain]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import decline_probability, sample_disagreements
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.models.calls import invoke_text
from mtrag_graph.prompts.budget import PASSAGE_MAX_CHARS
from mtrag_graph.prompts.build import (
    decline_messages,
    format_passages,
    question_for_answering,
    sample_messages,
    whole_passages,
)
from mtrag_graph.prompts.excerpts import select_evidence
from mtrag_graph.prompts.grounded import DECLINE_PROBE
from mtrag_graph.text import declines

SAMPLE_MAX_TOKENS = 24  # the graph's former sample_max_tokens: a reply long enough to tell a decline
PROMPTS = ("grounded", "plain", "neutral", "grounded-neutral", "sample")
# a plain instruction without the graph's "find the sentences ... only if none ... reply exactly" wording
NEUTRAL = (
    "Question: {question}\n\nAnswer the question using only the documents above. If they do not contain "
    "the answer, say that you don't know."
)
THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def task_state(record: Mapping[str, Any], context: Context, embed: Any) -> dict[str, Any]:
    """The state the run's answer prompt was built from (evidence excerpts recomputed)."""
    route = record.get("route") or {}
    state = {**route, "question": record["input"][-1]["text"]}
    passages = [dict(p) for p in record.get("contexts") or []]
    excerpts = select_evidence(question_for_answering(state), passages, context.evidence_tokens, embed)
    state["kept_passages"] = [{**p, "evidence": e} for p, e in zip(passages, excerpts, strict=True)]
    return state


def plain_messages(state: Mapping[str, Any], context: Context, instruction: str = "") -> list[Any]:
    """The rewritten question and the kept passages whole, with the instruction that offers a decline."""
    documents = format_passages(whole_passages(state["kept_passages"]), PASSAGE_MAX_CHARS)
    tail = (instruction or DECLINE_PROBE).format(
        question=question_for_answering(state), idk=context.idk_answer
    )
    return [SystemMessage(context.grounded_system_prompt), HumanMessage(f"Documents:\n{documents}\n\n{tail}")]


def probe(
    state: Mapping[str, Any], context: Context, prompt: str, samples: int, temperature: float, answer: str
) -> dict[str, Any]:
    if prompt == "sample":  # the graph's samples (Context.sample_instruction, sample_max_tokens)
        messages = sample_messages(state, context)
    elif prompt.startswith("grounded"):
        messages = decline_messages(
            state, context, NEUTRAL if prompt == "grounded-neutral" else DECLINE_PROBE
        )
    else:
        messages = plain_messages(state, context, NEUTRAL if prompt == "neutral" else "")
    model = get_chat_model(context.generate_model)
    result: dict[str, Any] = {"p_decline": decline_probability(model, messages)}
    max_tokens = SAMPLE_MAX_TOKENS if prompt == "sample" else 80
    if samples:
        replies = [
            str(invoke_text(model, messages, max_tokens=max_tokens, temperature=temperature).content)
            for _ in range(samples)
        ]
        result.update(
            samples=replies,
            declined=sum(declines(r) for r in replies),
            disagree=sample_disagreements(answer, replies, question_for_answering(state)),
        )
    return result


def row_of(verdict: Mapping[str, Any]) -> str:
    if not verdict.get("answerable"):
        return "unanswerable"
    return "answerable, right" if verdict.get("right") else "answerable, not right"


def summary(rows: Sequence[Mapping[str, Any]], prompts: Sequence[str]) -> str:
    """Per prompt: each row's decline probabilities, then the threshold sweep."""
    lines = []
    for prompt in prompts:
        lines.append(f"\n### {prompt}\n")
        lines.append(
            "| row | tasks | p_decline (sorted) | samples declining (>=1) | samples disagreeing (sorted) |"
        )
        lines.append("|---|---|---|---|---|")
        for name in ("unanswerable", "answerable, right", "answerable, not right"):
            mine = [r for r in rows if r["row"] == name and r[prompt]["p_decline"] is not None]
            values = sorted(r[prompt]["p_decline"] for r in mine)
            sampled = [r for r in mine if "declined" in r[prompt]]
            any_decline = sum(r[prompt]["declined"] > 0 for r in sampled)
            disagree = " ".join(str(n) for n in sorted(len(r[prompt]["disagree"]) for r in sampled))
            cells = " ".join(f"{v:.2f}" for v in values)
            lines.append(
                f"| {name} | {len(mine)} | {cells} | {any_decline}/{len(sampled)} | {disagree}/{len(sampled)} |"
            )
        lines.append(
            "\n| threshold | unanswerable declined | right answers lost | not-right answers declined |"
        )
        lines.append("|---|---|---|---|")
        for threshold in THRESHOLDS:
            counts = []
            for name in ("unanswerable", "answerable, right", "answerable, not right"):
                mine = [r for r in rows if r["row"] == name and r[prompt]["p_decline"] is not None]
                hit = sum(r[prompt]["p_decline"] >= threshold for r in mine)
                counts.append(f"{hit}/{len(mine)}")
            lines.append(f"| {threshold} | " + " | ".join(counts) + " |")
        sampled = [r for r in rows if "disagree" in r[prompt] and r.get("answered")]
        if sampled:
            lines.append("\n| disagreeing samples needed | answered unanswerable declined | right answers lost "
                         "| not-right answers declined |")  # fmt: skip
            lines.append("|---|---|---|---|")
            for needed in range(1, max(len(r[prompt]["samples"]) for r in sampled) + 1):
                counts = []
                for name in ("unanswerable", "answerable, right", "answerable, not right"):
                    mine = [r for r in sampled if r["row"] == name]
                    hit = sum(len(r[prompt]["disagree"]) >= needed for r in mine)
                    counts.append(f"{hit}/{len(mine)}")
                lines.append(f"| {needed} | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def read_run(run: Path) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]] | None:
    """A real-documents run folder's predictions by task id and its verdicts; None (and why, on stderr)
    when a file is missing."""
    for name in ("predictions.jsonl", "verdicts.jsonl"):
        if not (run / name).is_file():
            print(f"error: {run}: no {name} (run benchmarks.real_documents first)", file=sys.stderr)
            return None
    records = {
        r["task_id"]: r
        for r in map(json.loads, (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
    }
    verdicts = [
        json.loads(line) for line in (run / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return records, verdicts


def finished_rows(output: Path) -> dict[str, dict[str, Any]]:
    """The rows a resumable output already holds, by task id."""
    if not output.exists():
        return {}
    return {r["task_id"]: r for r in map(json.loads, output.read_text(encoding="utf-8").splitlines())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "run", type=Path, help="a real-documents run folder (predictions.jsonl, verdicts.jsonl)"
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="per-task JSON lines (resumable)")
    parser.add_argument("--prompts", nargs="+", choices=PROMPTS, default=list(PROMPTS))
    parser.add_argument("--samples", type=int, default=0, help="replies sampled per task and prompt")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--only-gate-yes", action="store_true", help="only tasks whose gate said yes")
    args = parser.parse_args(argv)
    loaded = read_run(args.run)
    if loaded is None:
        return 2
    records, verdicts = loaded
    context = Context()
    embed = get_embedder(context.embedder).embed
    done = finished_rows(args.output)
    rows = list(done.values())
    with open(args.output, "a", encoding="utf-8") as out:
        for verdict in verdicts:
            record = records.get(verdict["task_id"])
            if verdict["task_id"] in done or not record or not record.get("contexts"):
                continue
            if args.only_gate_yes and (record.get("route") or {}).get("gate") != "yes":
                continue
            state = task_state(record, context, embed)
            row: dict[str, Any] = {"task_id": verdict["task_id"], "row": row_of(verdict)}
            for prompt in args.prompts:
                answer = record["predictions"][0]["text"]
                row["answered"] = not declines(answer)
                row[prompt] = probe(state, context, prompt, args.samples, args.temperature, answer)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            rows.append(row)
            print(f"{row['task_id']}: {row['row']}: " + ", ".join(
                f"{p} {row[p]['p_decline']}" for p in args.prompts), file=sys.stderr)  # fmt: skip
    print(summary(rows, [p for p in args.prompts if all(p in r for r in rows)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
