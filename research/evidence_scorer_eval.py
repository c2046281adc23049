"""What the trained evidence scorer (``research.evidence_scorer_fit``) does to the excerpts, no model call.

Each sentence's excerpt score (``prompts.excerpts.score_sentences``: cosine plus lexical overlap plus a
lead for better-ranked passages) gets ``weight`` times the scorer's probability added; the excerpts are
then chosen as the graph chooses them, within ``--budget`` tokens.

- ``documents RUN...``: real-documents runs (``benchmarks.real_documents``); per run and weight, the
  answerable turns whose excerpts keep every key fact (of those whose kept passages hold them all), as
  ``research.evidence_keyfacts`` counts them;
- ``mtrag TASKS``: a task file with reference passages and answers (the MTRAG-UN dev slice: a report,
  never tuning); per weight, the mean share of the reference answer's content stems that the whole
  passages hold and the excerpts keep (``research.evidence_budget.kept_share``), ANSWERABLE and PARTIAL.

    python -m research.evidence_scorer_eval documents runs/rd-tuning-H --weights runs/escore/v1/verifier-head.safetensors
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.prompts.excerpts import Sentence, excerpts, score_sentences

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 8.0)


def rescored(
    question: str, passages: Sequence[dict[str, Any]], embed: Any, support: Callable[..., list[float]]
) -> tuple[list[list[Sentence]], list[list[float]]]:
    scored = score_sentences(question, passages, embed)
    flat = [s.text for ps in scored for s in ps]
    probabilities = support([(question, text) for text in flat]) if flat else []
    out, at = [], 0
    for ps in scored:
        out.append(probabilities[at : at + len(ps)])
        at += len(ps)
    return scored, out


def with_weight(
    scored: list[list[Sentence]], probabilities: list[list[float]], weight: float
) -> list[list[Sentence]]:
    return [
        [dataclasses.replace(s, score=s.score + weight * p) for s, p in zip(ps, qs, strict=True)]
        for ps, qs in zip(scored, probabilities, strict=True)
    ]


def documents(runs: Sequence[Path], weights: Sequence[float], budget: int, embed: Any, support: Any) -> None:
    from benchmarks.real_documents.score import facts_found
    from research.evidence_keyfacts import cases

    for run in runs:
        found = cases(run)
        prepared = [(case, *rescored(case["question"], case["passages"], embed, support)) for case in found]
        for weight in weights:
            kept, missed = 0, []
            for case, scored, probabilities in prepared:
                texts = [str(p.get("text") or "") for p in case["passages"]]
                shown = "\n".join(excerpts(texts, with_weight(scored, probabilities, weight), budget))
                if facts_found(shown, case["facts"]) == len(case["facts"]):
                    kept += 1
                else:
                    missed.append(case["task_id"])
            print(f"| {run.name} | {weight} | {kept}/{len(found)} | {' '.join(missed)} |", flush=True)


def mtrag(tasks_path: Path, weights: Sequence[float], budget: int, embed: Any, support: Any) -> None:
    from mtrag_graph.tasks import answerability_of
    from research.evidence_budget import kept_share

    rows = [json.loads(line) for line in tasks_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    prepared = []
    for task in rows:
        if answerability_of(task) not in ("ANSWERABLE", "PARTIAL") or not task.get("contexts"):
            continue
        question = next(t["text"] for t in reversed(task["input"]) if t["speaker"] == "user")
        passages = [{"text": str(c.get("text") or "")} for c in task["contexts"]]
        prepared.append((task, passages, *rescored(question, passages, embed, support)))
    for weight in weights:
        shares = []
        for task, passages, scored, probabilities in prepared:
            texts = [p["text"] for p in passages]
            shown = excerpts(texts, with_weight(scored, probabilities, weight), budget)
            share = kept_share(task["targets"][0]["text"], texts, shown)
            if share is not None:
                shares.append(share)
        print(f"| {tasks_path.name} | {weight} | {statistics.mean(shares):.3f} | "
              f"{sum(s >= 0.9 for s in shares)}/{len(shares)} |", flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("documents", "mtrag"))
    parser.add_argument("inputs", nargs="+", type=Path)
    parser.add_argument("--weights", required=True, type=Path, help="the scorer's safetensors file")
    parser.add_argument(
        "--mix", default=",".join(map(str, WEIGHTS)), help="weights of the scorer's probability"
    )
    parser.add_argument("--budget", type=int, default=300)
    args = parser.parse_args(argv)
    from mtrag_graph.judging.verifier import Verifier
    from mtrag_graph.models import get_embedder

    support = Verifier(args.weights, threads=2).pair_scores
    embed = get_embedder("minilm").embed
    mix = [float(w) for w in args.mix.split(",")]
    if args.mode == "documents":
        documents(args.inputs, mix, args.budget, embed, support)
    else:
        mtrag(args.inputs[0], mix, args.budget, embed, support)
    return 0


if __name__ == "__main__":
    sys.exit(main())
