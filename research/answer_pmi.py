"""Does the answer come from the passages or from the model's own prior? Pointwise mutual information per
task of a real-documents run.

For every answered task of a run (what ``python -m benchmarks.real_documents`` wrote), the answering model
scores the run's own answer, token by token (teacher forcing, no sampling), under two prompts:

- ``with``: the graph's answer prompt as the run saw it (``research.decline_samples.task_state``: the
  standalone question, selected history, kept passages and their excerpts; ``prompts.build.decline_messages``);
- ``without``: the same system text and the standalone question alone, no passages, no conversation.

PMI = log p(answer | with) - log p(answer | without), per answer token (mean) and in all. An answer the
passages made likely scores high; one the model would have written without them (a fact from its own
training, or an invention) scores low. Also the PMI of the answer's fact tokens only (the tokens of its
numbers, options and names: ``judging.decline.key_facts``). The table sweeps a threshold on each:
unanswerable questions declined against right answers lost.

    python -m research.answer_pmi runs/rd-tuning-Q -o runs/pmi-Q.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import key_facts
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.prompts.build import decline_messages, question_for_answering
from mtrag_graph.text import declines
from research.decline_samples import finished_rows, read_run, row_of, task_state

ROWS = ("unanswerable", "answerable, right", "answerable, not right")


def chatml(messages: Sequence[BaseMessage]) -> str:
    """Qwen2.5's chat template (the bundled models), up to the assistant's turn."""
    role = {"system": "system", "human": "user", "ai": "assistant"}
    text = "".join(f"<|im_start|>{role[m.type]}\n{m.content}<|im_end|>\n" for m in messages)
    return text + "<|im_start|>assistant\n"


def answer_logprobs(
    model: Any, messages: Sequence[BaseMessage], answer: str
) -> tuple[list[float], list[str]]:
    """Each answer token's log-probability after the prompt and the tokens before it, and the tokens."""
    model._ensure_loaded()
    llama = model._llama
    with model._lock:
        prompt = llama.tokenize(chatml(messages).encode("utf-8"), add_bos=False, special=True)
        tokens = llama.tokenize(answer.encode("utf-8"), add_bos=False, special=False)
        llama.reset()
        llama.eval(prompt)
        values: list[float] = []
        for token in tokens:
            logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(
                np.float64
            )
            top = logits.max()
            values.append(float(logits[token] - top - np.log(np.exp(logits - top).sum())))
            llama.eval([token])
        llama.reset()  # the next graph call starts from a known state
        pieces = [llama.detokenize([t]).decode("utf-8", errors="ignore") for t in tokens]
    return values, pieces


def without_messages(state: Mapping[str, Any], context: Context) -> list[BaseMessage]:
    return [
        SystemMessage(context.grounded_system_prompt),
        HumanMessage(f"Question: {question_for_answering(state)}\n\nAnswer the question."),
    ]


def fact_mask(pieces: Sequence[str], answer: str) -> list[bool]:
    """Which tokens fall inside one of the answer's key facts (by character offsets)."""
    spans = []
    for fact in key_facts(answer):
        start = answer.find(fact)
        while start >= 0:
            spans.append((start, start + len(fact)))
            start = answer.find(fact, start + 1)
    mask, at = [], 0
    for piece in pieces:
        end = at + len(piece)
        mask.append(any(a < end and at < b for a, b in spans))
        at = end
    return mask


def score(record: Mapping[str, Any], context: Context, embed: Any) -> dict[str, Any]:
    state = task_state(record, context, embed)
    answer = record["predictions"][0]["text"]
    model = get_chat_model(context.generate_model)
    with_lp, pieces = answer_logprobs(model, decline_messages(state, context), answer)
    without_lp, _ = answer_logprobs(model, without_messages(state, context), answer)
    pmi = np.array(with_lp) - np.array(without_lp)
    mask = np.array(fact_mask(pieces, answer), dtype=bool)
    return {
        "tokens": len(pieces),
        "pmi_mean": round(float(pmi.mean()), 4) if len(pmi) else None,
        "pmi_sum": round(float(pmi.sum()), 3),
        "logp_with_mean": round(float(np.mean(with_lp)), 4) if with_lp else None,
        "logp_without_mean": round(float(np.mean(without_lp)), 4) if without_lp else None,
        "fact_tokens": int(mask.sum()),
        "pmi_facts_mean": round(float(pmi[mask].mean()), 4) if mask.any() else None,
        "pmi_facts_min": round(float(pmi[mask].min()), 4) if mask.any() else None,
    }


def summary(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for signal in ("pmi_mean", "pmi_facts_mean", "pmi_facts_min", "logp_without_mean"):
        lines += [f"\n### {signal}\n", "| row | tasks | values (sorted) |", "|---|---|---|"]
        for name in ROWS:
            values = sorted(r[signal] for r in rows if r["row"] == name and r.get(signal) is not None)
            lines.append(f"| {name} | {len(values)} | {' '.join(f'{v:.2f}' for v in values)} |")
        lines += [
            "",
            "| decline below | unanswerable declined | right lost | not right declined |",
            "|---|---|---|---|",
        ]
        cuts = sorted({r[signal] for r in rows if r.get(signal) is not None})
        for cut in cuts[:: max(1, len(cuts) // 12)]:
            cells = []
            for name in ROWS:
                mine = [r for r in rows if r["row"] == name and r.get(signal) is not None]
                cells.append(f"{sum(r[signal] < cut for r in mine)}/{len(mine)}")
            lines.append(f"| {cut:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "run", type=Path, help="a real-documents run folder (predictions.jsonl, verdicts.jsonl)"
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="per-task JSON lines (resumable)")
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
            if declines(record["predictions"][0]["text"]):
                continue
            row = {"task_id": verdict["task_id"], "row": row_of(verdict), **score(record, context, embed)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
