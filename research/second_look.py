"""Would a second look find what the answer missed? Two offline checks on a real-documents run, no model call.

    python -m research.second_look excerpt RUN [RUN ...]   # an excerpt chosen by the question and the draft
    python -m research.second_look yes-no RUN [RUN ...]    # the yes/no quote ranked as the excerpts rank

``excerpt``: for each answered answerable turn whose kept passages hold its key facts, the excerpt the
answering prompt saw (the standalone question's, ``prompts.excerpts`` at ``--budget`` tokens) against
one chosen by the question's score plus the answer's (the sentences the draft rests on, added), and
whether the answer's closest sentence was shown at all. Were the wrong answers written from sentences
the model never saw, the second excerpt would hold their facts more often than the first.

``yes-no``: for each answerable yes/no question, does the quote (``judging.yes_no.quoted``) hold the key
facts when its sentences are ranked by cosine (today) or by cosine plus the excerpts' rare-word score?

Read on the tuning and fresh splits (benchmarks/results/documents.md, the twelfth round).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import facts_found
from mtrag_graph.judging import yes_no
from mtrag_graph.prompts.excerpts import Embed, Sentence, excerpts, lexical_scores, score_sentences
from mtrag_graph.tasks import read_jsonl
from mtrag_graph.text.answers import is_yes_no_question
from research.evidence_keyfacts import cases

BUDGET = 300


def _records(run: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(prediction, verdict) of every task of a run folder that ``benchmarks.real_documents`` scored."""
    verdicts = {v["task_id"]: v for v in _lines(run / "verdicts.jsonl")}
    return [
        (r, verdicts[r["task_id"]]) for r in _lines(run / "predictions.jsonl") if r["task_id"] in verdicts
    ]


def _lines(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for number, raw, error in read_jsonl(path):
        if error is not None or not isinstance(raw, dict):
            raise ValueError(f"{path}, line {number}: {error or 'not a JSON object'}")
        found.append(raw)
    return found


def _question(record: dict[str, Any]) -> str:
    return (record.get("route") or {}).get("standalone_question") or record["input"][-1]["text"]


def added(first: Sequence[Sequence[Sentence]], second: Sequence[Sequence[Sentence]]) -> list[list[Sentence]]:
    """Each sentence scored by the sum of its two scores (the same passages, scored for two texts)."""
    return [
        [dataclasses.replace(a, score=a.score + b.score) for a, b in zip(pa, pb, strict=True)]
        for pa, pb in zip(first, second, strict=True)
    ]


def excerpt_rows(run: Path, embed: Embed | None, budget: int = BUDGET) -> list[dict[str, Any]]:
    """The turns ``research.evidence_keyfacts`` counts (answerable, their kept passages holding every key
    fact), those answered (not declined), each with what the two excerpts hold."""
    answered = {r["task_id"]: (r, v) for r, v in _records(run) if not v["idk"]}
    rows = []
    for case in cases(run):
        if case["task_id"] not in answered:
            continue
        record, verdict = answered[case["task_id"]]
        passages, facts = case["passages"], case["facts"]
        texts = [str(p.get("text") or "") for p in passages]
        answer = record["predictions"][0]["text"]
        by_question = score_sentences(case["question"], passages, embed)
        by_answer = score_sentences(answer, passages, embed)
        shown = "\n".join(excerpts(texts, by_question, budget))
        second = "\n".join(excerpts(texts, added(by_question, by_answer), budget))
        closest = max((s for p in by_answer for s in p), key=lambda s: s.score, default=None)
        rows.append(
            {
                "task_id": case["task_id"],
                "right": bool(verdict["right"]),
                "shown_holds": facts_found(shown, facts) == len(facts),
                "second_holds": facts_found(second, facts) == len(facts),
                "closest_shown": closest is not None and closest.text.strip() in shown,
            }
        )
    return rows


def yes_no_rows(run: Path, embed: Embed, weight: float = 0.5) -> list[dict[str, Any]]:
    questions = load_set()
    rows = []
    for record, _ in _records(run):
        _, _, turn = turn_of(questions, record["task_id"])
        passages = record.get("contexts") or []
        question = _question(record)
        if not turn.answerable or not passages or not is_yes_no_question(question):
            continue
        found = [
            (i, s) for i, p in enumerate(passages) for s in yes_no.passage_sentences(str(p.get("text", "")))
        ]
        if not found:
            continue
        vectors = np.asarray(embed([question, *(s for _, s in found)]), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        cosines = vectors[1:] @ vectors[0]
        mixed = cosines + weight * np.asarray(lexical_scores(question, [s for _, s in found]))
        holds = {}
        for name, rank in (("cosine", cosines), ("cosine+words", mixed)):
            order = np.argsort(-rank, kind="stable")[:2]
            quote = yes_no.quoted([(found[j][0], found[j][1], float(cosines[j])) for j in order], passages)
            holds[name] = quote is not None and facts_found(quote[1], turn.key_facts) == len(turn.key_facts)
        rows.append({"task_id": record["task_id"], **holds})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check", choices=("excerpt", "yes-no"))
    parser.add_argument(
        "runs", nargs="+", type=Path, help="real-documents run folders (predictions, verdicts)"
    )
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument(
        "--lexical", action="store_true", help="score sentences without the embedder (excerpt)"
    )
    args = parser.parse_args(argv)
    for run in args.runs:
        if not (run / "verdicts.jsonl").exists():
            print(f"error: {run}: no verdicts.jsonl (score the run first)", file=sys.stderr)
            return 2
    from mtrag_graph.models import get_embedder

    embed = None if args.lexical and args.check == "excerpt" else get_embedder("minilm").embed
    for run in args.runs:
        try:
            if args.check == "excerpt":
                rows = excerpt_rows(run, embed, args.budget)
            else:
                assert embed is not None  # --lexical applies to the excerpt check only
                rows = yes_no_rows(run, embed)
        except ValueError as error:  # a line of the run that is no JSON object
            print(f"error: {error}", file=sys.stderr)
            return 2
        if args.check == "excerpt":
            print(f"{run}: answered answerable turns whose kept passages hold the facts")
            print(
                "| answers | turns | facts in the excerpt shown | in the question+answer excerpt | answer's closest sentence shown |"
            )
            print("|---|---|---|---|---|")
            for label, right in (("right", True), ("wrong", False)):
                part = [r for r in rows if r["right"] == right]
                print(f"| {label} | {len(part)} | {sum(r['shown_holds'] for r in part)} | "
                      f"{sum(r['second_holds'] for r in part)} | {sum(r['closest_shown'] for r in part)} |")  # fmt: skip
        else:
            print(f"{run}: answerable yes/no questions {len(rows)}; the quote holds the facts: by cosine "
                  f"{sum(r['cosine'] for r in rows)}, by cosine and rare words {sum(r['cosine+words'] for r in rows)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
