"""Does a cross-encoder's reading of question against passage tell a passage set that holds the answer
from one that does not, where the gate's likeness signals do not?

``research.gate_signals`` found that at 2% of people's answers turned away, no model-free signal turns away
a single one of the tuning split's 55 UNANSWERABLE turns over retrieved passages. This replay adds a
cross-encoder's scores of (question, passage) over the same items (``gate_items``, the same seed: the
item ids of ``--signals`` rows) and compares feature sets with ``research.gate_signals.compare`` (5-fold
CV grouped by conversation, threshold chosen on the training folds at ``--max-positive-loss``).

    python -m research.gate_answerability --data $MTRAG_DATA --index indexes/mini \\
        --signals runs/gate-signals/signals.jsonl -o runs/gate-answerability [--train]

**Shipped**: the bundled cross-encoder reranker (``mtrag_graph.models.cross_encoder``, trained listwise on
MTRAG's judged pairs by ``research.reranker_fit``; its training conversations overlap the tuning split, so
its scores on positives are optimistic). **Trained** (``--train``): the bundled MiniLM trained here as a
pointwise answerability cross-encoder, two folds by conversation (sha256 of the id), each scored by the
model trained on the other fold only. A pair is positive when it is a reference passage of an answerable
turn; negative when it is a passage retrieved for an UNANSWERABLE turn, a passage of the other
conversation an answerable turn was moved onto, or a passage retrieved for an answerable turn that is not
among its reference passages (``--hard`` of them per turn: same topic, no judged answer). Only the tuning
split (``tasks/mtrag_reference.jsonl``) is read. No language model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.measure.decisions.retrieval import index_retriever
from mtrag_graph.measure.decisions.sets import gate_items, load_split
from mtrag_graph.retrieval.corpus import passage_text
from research.gate_signals import CURRENT, compare

CE_FEATURES = ("max", "mean", "top2")


def pair_text(passage: dict[str, Any]) -> str:
    """What a passage is scored as, as the rerank node passes it (``passage_text``: title and text)."""
    return passage_text(str(passage.get("title") or ""), str(passage.get("text") or ""))


def fold_of(conversation: str) -> int:
    return int(hashlib.sha256(conversation.encode()).hexdigest(), 16) % 2


def ce_features(scores: Sequence[float], prefix: str) -> dict[str, float]:
    """The item's passage scores as features: the best, the mean, the mean of the best two."""
    ordered = sorted(scores, reverse=True)
    return {
        f"{prefix}_max": ordered[0],
        f"{prefix}_mean": float(np.mean(ordered)),
        f"{prefix}_top2": float(np.mean(ordered[:2])),
    }


def shipped_model() -> tuple[Any, Any]:
    """The bundled cross-encoder reranker (``models.cross_encoder``) and the MiniLM tokenizer."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    from mtrag_graph.models.bundled import minilm_path
    from mtrag_graph.models.cross_encoder import bundled_cross_encoder

    model = BertForSequenceClassification.from_pretrained(str(bundled_cross_encoder()))
    return model, AutoTokenizer.from_pretrained(str(minilm_path()))


def train(
    pairs: list[tuple[str, str, float]], *, layers: int, epochs: int, lr: float, head_lr: float, seed: int
) -> tuple[Any, Any]:
    """The bundled MiniLM, its top ``layers`` encoder layers, pooler and head trained with binary
    cross-entropy on ``(question, passage, label)`` pairs (classes weighted to balance); and its tokenizer."""
    import torch

    from mtrag_graph.models.cross_encoder import MAX_LENGTH
    from research.reranker_fit import fresh_cross_encoder, optimiser_of

    torch.manual_seed(seed)
    model, tokenizer = fresh_cross_encoder(layers)
    positives = sum(label for *_, label in pairs)
    weight = torch.tensor((len(pairs) - positives) / max(positives, 1))
    optimiser = optimiser_of(model, lr, head_lr)
    rng = random.Random(seed)
    batch = 16
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        model.train()
        started, total = time.time(), 0.0
        for at in range(0, len(order), batch):
            chunk = [pairs[i] for i in order[at : at + batch]]
            encoded = tokenizer([q for q, _, _ in chunk], [p for _, p, _ in chunk], truncation="only_second",
                                max_length=MAX_LENGTH, padding=True, return_tensors="pt")  # fmt: skip
            logits = model(**encoded).logits[:, 0]
            labels = torch.tensor([label for *_, label in chunk], dtype=torch.float)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=weight)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(chunk)
            if (at // batch) % 40 == 0:
                print(f"epoch {epoch + 1} {at}/{len(order)}: loss {total / (at + len(chunk)):.4f} "
                      f"({time.time() - started:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
    return model, tokenizer


def training_pairs(
    items: Sequence[dict[str, Any]], hard: dict[str, list[dict[str, Any]]]
) -> list[tuple[str, str, float]]:
    """Labelled pairs of the items (see the module's docstring)."""
    pairs = []
    for item in items:
        question = str(item["question"])
        for passage in item.get("passages") or []:
            pairs.append((question, pair_text(passage), 1.0 if item["kind"] == "positive" else 0.0))
        for passage in hard.get(item["item_id"], []):
            pairs.append((question, pair_text(passage), 0.0))
    return pairs


def hard_negatives(
    items: Sequence[dict[str, Any]], tasks: dict[str, dict[str, Any]], index: str, per_turn: int, sample: int,
    seed: int,
) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """For ``sample`` answerable turns: up to ``per_turn`` of the passages retrieved for the turn that are
    not among its reference passages."""
    retrieve = index_retriever(index)
    positives = [i for i in items if i["kind"] == "positive"]
    chosen = random.Random(seed).sample(positives, min(sample, len(positives)))
    out = {}
    for n, item in enumerate(chosen):
        reference = {p["document_id"] for p in item.get("passages") or []}
        found = [p for p in retrieve(tasks[item["task_id"]]) if p["document_id"] not in reference]
        out[item["item_id"]] = found[:per_turn]
        if n % 50 == 0:
            print(f"hard negatives {n}/{len(chosen)}", file=sys.stderr, flush=True)
    return out


def compare_either(
    rows: list[dict[str, Any]], first: Sequence[str], second: Sequence[str], loss: float
) -> tuple[str, list[str]]:
    """Two fitted rules, either of which declines: a logistic regression on each feature set, each
    threshold chosen on the training folds at half of ``loss`` (5-fold CV grouped by conversation, as
    ``research.gate_signals.compare``). Returns the table's row cells: positives, UNANSWERABLE over
    retrieved passages, moved answers turned away."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mtrag_graph.measure.decisions.metrics import best_threshold

    y = np.array([r["label"] for r in rows])
    groups = np.array([r["conversation_id"] for r in rows])
    kinds = np.array([r["kind"] for r in rows])
    decline = np.zeros(len(rows), dtype=bool)
    for train_rows, test_rows in GroupKFold(n_splits=5).split(rows, y, groups):
        for features in (first, second):
            x = np.array([[r["features"][f] for f in features] for r in rows])
            model = make_pipeline(
                StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=2000)
            )
            model.fit(x[train_rows], y[train_rows])
            scores = model.predict_proba(x[train_rows])[:, 1]
            threshold, _ = best_threshold(scores.tolist(), y[train_rows].tolist(), max_positive_loss=loss / 2)
            decline[test_rows] |= model.predict_proba(x[test_rows])[:, 1] < threshold
    kinds_of = ("positive", "unanswerable_retrieved", "other_conversation")
    return "either", [f"{decline[kinds == k].sum()}/{(kinds == k).sum()}" for k in kinds_of]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.gate_answerability", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True)
    parser.add_argument("--index", required=True, help="an index of corpora/mini (mtrag-graph index)")
    parser.add_argument("--signals", required=True, help="research.gate_signals' signals.jsonl")
    parser.add_argument("--other", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-positive-loss", type=float, default=0.02)
    parser.add_argument("--train", action="store_true", help="train the two-fold answerability cross-encoder")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=5e-5, help="the trained encoder layers' learning rate")
    parser.add_argument("--head-lr", type=float, default=1e-3, help="the pooler's and the head's")
    parser.add_argument("--hard", type=int, default=2, help="hard negatives per answerable turn")
    parser.add_argument("--hard-sample", type=int, default=400, help="answerable turns given hard negatives")
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    signals = {
        json.loads(line)["item_id"]: json.loads(line) for line in Path(args.signals).read_text().splitlines()
    }
    raw_tasks = load_split(args.data, "tuning")
    tasks = {t["task_id"]: t for t in raw_tasks}
    items = [i for i in gate_items(raw_tasks, index_retriever(args.index), other_conversation=args.other,
                                   seed=args.seed) if i.get("passages")]  # fmt: skip
    missing = [i["item_id"] for i in items if i["item_id"] not in signals]
    if missing:
        raise SystemExit(
            f"{len(missing)} items not in {args.signals} (another seed or --other?): {missing[:3]}"
        )
    # one question and its passages' texts per item, as research.reranker_fit.score_pairs takes them
    pairs_of = {i["item_id"]: (str(i["question"]), [pair_text(p) for p in i["passages"]]) for i in items}

    shipped_path = out / "shipped.jsonl"
    if not shipped_path.exists():
        from research.reranker_fit import score_pairs

        model, tokenizer = shipped_model()
        started = time.time()
        rows = [
            {"item_id": k, "scores": score_pairs(model, tokenizer, q, texts)}
            for k, (q, texts) in pairs_of.items()
        ]
        shipped_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"shipped cross-encoder: {sum(len(texts) for _, texts in pairs_of.values())} pairs in {time.time() - started:.0f} s",
              file=sys.stderr)  # fmt: skip
    shipped = {
        json.loads(line)["item_id"]: json.loads(line)["scores"]
        for line in shipped_path.read_text().splitlines()
    }

    trained: dict[str, list[float]] = {}
    trained_path = out / f"trained-{args.layers}l-{args.epochs}e-{args.lr:g}-{args.head_lr:g}.jsonl"
    if args.train and not trained_path.exists():
        hard_path = out / f"hard-{args.hard}-{args.hard_sample}.json"
        if not hard_path.exists():
            found = hard_negatives(items, tasks, args.index, args.hard, args.hard_sample, args.seed)
            hard_path.write_text(json.dumps(found))
        hard = json.loads(hard_path.read_text())
        from research.reranker_fit import score_pairs

        for fold in (0, 1):
            train_items = [i for i in items if fold_of(i["conversation_id"]) != fold]
            pairs = training_pairs(train_items, hard)
            print(
                f"fold {fold}: {len(pairs)} training pairs, {int(sum(p[2] for p in pairs))} positive",
                file=sys.stderr,
            )
            started = time.time()
            model, tokenizer = train(pairs, layers=args.layers, epochs=args.epochs, lr=args.lr,
                                     head_lr=args.head_lr, seed=args.seed)  # fmt: skip
            print(f"fold {fold}: trained in {time.time() - started:.0f} s", file=sys.stderr)
            for item in items:
                if fold_of(item["conversation_id"]) == fold:
                    trained[item["item_id"]] = score_pairs(model, tokenizer, *pairs_of[item["item_id"]])
        trained_path.write_text(
            "".join(json.dumps({"item_id": k, "scores": v}) + "\n" for k, v in trained.items())
        )
    if trained_path.exists():
        trained = {
            json.loads(line)["item_id"]: json.loads(line)["scores"]
            for line in trained_path.read_text().splitlines()
        }

    rows = []
    for item in items:
        row = dict(signals[item["item_id"]])
        row["features"] = {**row["features"], **ce_features(shipped[item["item_id"]], "shipped")}
        if item["item_id"] in trained:
            row["features"].update(ce_features(trained[item["item_id"]], "trained"))
        rows.append(row)
    sets: dict[str, Sequence[str]] = {
        "shipped four": CURRENT,
        "shipped cross-encoder alone": tuple(f"shipped_{f}" for f in CE_FEATURES),
        "shipped four + shipped cross-encoder": (*CURRENT, *(f"shipped_{f}" for f in CE_FEATURES)),
    }
    if trained:
        sets["trained cross-encoder alone"] = tuple(f"trained_{f}" for f in CE_FEATURES)
        sets["shipped four + trained cross-encoder"] = (*CURRENT, *(f"trained_{f}" for f in CE_FEATURES))
    table = compare(rows, sets, args.max_positive_loss)
    for name in ("shipped", "trained") if trained else ("shipped",):
        _, cells = compare_either(
            rows, CURRENT, tuple(f"{name}_{f}" for f in CE_FEATURES), args.max_positive_loss
        )
        table += (
            f"\n| shipped four, or the {name} cross-encoder alone (each at half the loss) | | "
            + " | ".join(cells)
            + " |"
        )
    (out / "table.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
