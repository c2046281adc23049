"""Train an evidence scorer: the bundled MiniLM as a cross-encoder for "does this sentence state the
answer to this question?", a score for choosing the answering prompt's excerpts beside the embedding
cosine and the lexical overlap (``prompts.excerpts``). Tried in issue 47's eleventh round and not kept:
it loses key facts on documents it has not seen (benchmarks/results/documents.md); nothing ships.

    OMP_NUM_THREADS=1 python -m research.evidence_scorer_fit --data $MTRAG_DATA -o runs/escore/v1
    python -m research.evidence_scorer_eval documents runs/rd-fresh-H --weights runs/escore/v1/verifier-head.safetensors

The weights file keeps the verifier's name (``research.verifier_fit.save``): the same tensors.

Pairs (question, sentence) from MTRAG's reference tasks only (``load_split(..., "tuning")``: never the
MTRAG-UN dev slice, never the real-documents set), sentences cut as the excerpts cut them
(``prompts.excerpts.evidence_spans``). The question is the organisers' standalone rewrite where one
exists (``research.verifier_data.rewrites``), else the last user turn. Answer words: the human answer's
content stems that are not in the question.

- **positive**: in an ANSWERABLE task's gold passages, the sentences sharing at least ``MIN_ANSWER_STEMS``
  answer words and at least ``POSITIVE_SHARE`` as many as the best sentence of all its gold passages
  (``MAX_POSITIVES`` at most, the most shared first);
- **same_passage** (negative): sentences of the same gold passages sharing at most one answer word
  (``NEGATIVES_PER_TASK`` at most, seeded), the hard case: same topic, same page, not the answer;
- **other_passage** (negative): sentences of the BM25 top passage of the task's domain that is not gold
  and holds under a third of the answer words;
- **unanswerable** (negative): sentences of an UNANSWERABLE task's two BM25 top passages.

Sentences between the two (one answer word short of a positive) are left out. Split by conversation, seed
0, 20% held out (``research.verifier_data.split_of``). Training: the top two layers and a one-logit head,
as ``research.verifier_fit`` trains the verifier (same code); held-out figures: AUC, and how often a
task's positive sentence ranks first among its gold passages' sentences, against the excerpts' own score
(cosine plus lexical overlap).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.prompts.excerpts import evidence_spans
from research.verifier_data import Corpus, answer_stems, coverage, reference_tasks, shared

MIN_ANSWER_STEMS = 2
POSITIVE_SHARE = 0.7  # of the best sentence's answer words
MAX_POSITIVES = 3  # a task's sentences sharing the most answer words
NEGATIVES_PER_TASK = 8
OTHER_SENTENCES = 3
UNANSWERABLE_SENTENCES = 4
MIN_SENTENCE_CHARS = 12
MAX_SENTENCE_CHARS = 600
EPOCHS = 3


def _sentences(text: str) -> list[str]:
    found = [text[a:b].strip() for a, b in evidence_spans(text)]
    return [s[:MAX_SENTENCE_CHARS] for s in found if len(s) >= MIN_SENTENCE_CHARS]


def answerable_pairs(
    task: dict[str, Any], question: str, corpus: Corpus, rng: random.Random
) -> list[dict[str, Any]]:
    stems = answer_stems(task["targets"][0]["text"], question)
    gold = [s for c in task.get("contexts") or [] for s in _sentences(str(c.get("text") or ""))]
    if not stems or not gold:
        return []
    counts = [shared(s, stems) for s in gold]
    top = max(counts)
    if top < MIN_ANSWER_STEMS:
        return []
    best = sorted(((n, -i) for i, n in enumerate(counts) if n >= max(MIN_ANSWER_STEMS, POSITIVE_SHARE * top)),
                  reverse=True)[:MAX_POSITIVES]  # fmt: skip
    pairs = [{"kind": "positive", "label": 1, "sentence": gold[-i]} for _, i in best]
    negatives = [s for s, n in zip(gold, counts, strict=True) if n <= 1]
    rng.shuffle(negatives)
    pairs += [{"kind": "same_passage", "label": 0, "sentence": s} for s in negatives[:NEGATIVES_PER_TASK]]
    gold_ids = {c.get("document_id") for c in task.get("contexts") or []}
    for row in corpus.search(question):
        if row["_id"] in gold_ids or coverage(row["text"], stems) >= 1 / 3:
            continue
        other = _sentences(row["text"])
        rng.shuffle(other)
        pairs += [{"kind": "other_passage", "label": 0, "sentence": s} for s in other[:OTHER_SENTENCES]]
        break
    return pairs


def unanswerable_pairs(question: str, corpus: Corpus, rng: random.Random) -> list[dict[str, Any]]:
    found = [s for row in corpus.search(question, 2) for s in _sentences(row["text"])]
    rng.shuffle(found)
    return [{"kind": "unanswerable", "label": 0, "sentence": s} for s in found[:UNANSWERABLE_SENTENCES]]


def build_pairs(data_dir: str | Path, seed: int = 0) -> list[dict[str, Any]]:
    """Every pair with its split, kind, label, task and question; same seed, same pairs."""
    rng = random.Random(seed)
    pairs: list[dict[str, Any]] = []
    for task, label, question, corpus, base in reference_tasks(data_dir, seed):
        made = (
            answerable_pairs(task, question, corpus, rng)
            if label == "ANSWERABLE"
            else unanswerable_pairs(question, corpus, rng)
        )
        pairs += [{**base, **pair, "passage": pair["sentence"]} for pair in made]
    return pairs


def synthetic_pairs(paths: Sequence[Path], seed: int) -> list[dict[str, Any]]:
    """Train pairs from ``research.evidence_scorer_synth`` files: the question with its sentence
    (positive) and with up to ``NEGATIVES_PER_TASK`` other sentences of its passage (negatives)."""
    rng = random.Random(seed)
    pairs: list[dict[str, Any]] = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            row = json.loads(line)
            base = {
                "split": "train",
                "task_id": f"{path.name}:{n}",
                "domain": "synthetic",
                "question": row["question"],
            }
            pairs.append(
                {
                    **base,
                    "kind": "positive",
                    "label": 1,
                    "sentence": row["sentence"],
                    "passage": row["sentence"],
                }
            )
            others = [s[:MAX_SENTENCE_CHARS] for s in row["others"] if len(s) >= MIN_SENTENCE_CHARS]
            rng.shuffle(others)
            pairs += [{**base, "kind": "same_passage", "label": 0, "sentence": s, "passage": s}
                      for s in others[:NEGATIVES_PER_TASK]]  # fmt: skip
    return pairs


def first_ranked(pairs: Sequence[dict[str, Any]], scores: Sequence[float]) -> float:
    """Share of answerable tasks whose best-scored gold sentence (positives and same_passage negatives)
    is a positive."""
    by_task: dict[str, list[tuple[float, int]]] = {}
    for pair, score in zip(pairs, scores, strict=True):
        if pair["kind"] in ("positive", "same_passage"):
            by_task.setdefault(pair["task_id"], []).append((score, pair["label"]))
    ranked = [
        max(rows)[1] for rows in by_task.values() if any(y for _, y in rows) and not all(y for _, y in rows)
    ]
    return round(sum(ranked) / len(ranked), 4) if ranked else float("nan")


def baseline_scores(pairs: Sequence[dict[str, Any]]) -> list[float]:
    """The excerpts' own score of each pair: cosine plus lexical overlap (``score_sentences``), the
    sentence scored alone (no passage rank)."""
    from mtrag_graph.models import get_embedder
    from mtrag_graph.prompts.excerpts import score_sentences

    embed = get_embedder("minilm").embed
    return [score_sentences(p["question"], [{"text": p["sentence"]}], embed)[0][0].score for p in pairs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="the MTRAG data folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument(
        "--synthetic",
        type=Path,
        action="append",
        default=[],
        help="questions written from a user's documents (research.evidence_scorer_synth), added to train",
    )
    parser.add_argument("--no-mtrag-train", action="store_true", help="train on the synthetic pairs only")
    parser.add_argument("-o", "--output", required=True, help="folder for the weights and fit.json")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("--data or MTRAG_DATA is required")

    from mtrag_graph.judging.verifier import MAX_LENGTH, weights_sha256
    from research.verifier_fit import BATCH, LEARNING_RATE, TRAINED_LAYERS, auc, save, train_and_score

    pairs = build_pairs(args.data, args.seed)
    train = [] if args.no_mtrag_train else [p for p in pairs if p["split"] == "train"]
    train += synthetic_pairs(args.synthetic, args.seed)
    held = [p for p in pairs if p["split"] == "held-out"]
    counts = {f"{split}_{kind}": sum(1 for p in pairs if p["split"] == split and p["kind"] == kind)
              for split in ("train", "held-out")
              for kind in ("positive", "same_passage", "other_passage", "unanswerable")}  # fmt: skip
    counts["train_synthetic"] = sum(1 for p in train if p["domain"] == "synthetic")
    print(json.dumps(counts), flush=True)
    encoder, head, scores, started = train_and_score(train, held, epochs=args.epochs, seed=args.seed)
    train_seconds = round(time.time() - started)
    before = baseline_scores(held)
    labels = [p["label"] for p in held]
    record = {
        "seed": args.seed, "epochs": args.epochs, "batch": BATCH, "learning_rate": LEARNING_RATE,
        "trained_layers": TRAINED_LAYERS, "max_length": MAX_LENGTH,
        "train_seconds": train_seconds, "pairs": counts,
        "held_out": {"auc": round(auc(labels, scores), 4), "auc_excerpt_score": round(auc(labels, before), 4),
                     "positive_first": first_ranked(held, scores),
                     "positive_first_excerpt_score": first_ranked(held, before)},
    }  # fmt: skip
    folder = Path(args.output)
    path = save(encoder, head, folder)
    record.update({"weights": path.name, "bytes": path.stat().st_size, "sha256": weights_sha256(path)})
    (folder / "fit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
