"""Train the answer verifier (``mtrag_graph/judging/verifier.py``): the bundled MiniLM as a cross-encoder
for "does this passage state the answer to this question?", on the train split of
``research.verifier_data``'s pairs; then score the held-out split.

    OMP_NUM_THREADS=1 python -m research.verifier_fit --data $MTRAG_DATA -o mtrag_graph/data/verifier/

One command, CPU, one thread: it builds the pairs (same seed, same pairs), fine-tunes the top
``TRAINED_LAYERS`` encoder layers, the pooler and a one-logit head (the embeddings and lower layers stay
the bundled model's, which keeps the shipped file small and the fit fast), and writes those tensors
(``verifier-head.safetensors``: matrices int8 with a scale a row, the rest fp16) with ``fit.json`` (settings, data and held-out figures,
hash). Loss: binary cross-entropy with the positives weighted up to the negatives' count.
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

from mtrag_graph.judging.verifier import (
    MAX_LENGTH,
    WEIGHTS,
    encode_pairs,
    load_model,
    quantize,
    weights_sha256,
)
from research.verifier_data import KINDS, build_pairs

TRAINED_LAYERS = 3  # of MiniLM-L6's six
EPOCHS = 2
BATCH = 16
LEARNING_RATE = 5e-5
WARMUP_SHARE = 0.1


def auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """Area under the ROC curve (ties count half)."""
    pos = [s for y, s in zip(labels, scores, strict=True) if y]
    neg = [s for y, s in zip(labels, scores, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def batches(pairs: Sequence[dict[str, Any]], rng: random.Random) -> list[list[dict[str, Any]]]:
    """Shuffled batches of pairs of similar length (less padding), in shuffled order."""
    order = list(pairs)
    rng.shuffle(order)
    chunks = [order[i : i + BATCH * 8] for i in range(0, len(order), BATCH * 8)]
    out = []
    for chunk in chunks:
        chunk.sort(key=lambda p: len(p["question"]) + len(p["passage"]))
        out.extend(chunk[i : i + BATCH] for i in range(0, len(chunk), BATCH))
    rng.shuffle(out)
    return out


def trainable(name: str) -> bool:
    first = 6 - TRAINED_LAYERS
    return name.startswith(("classifier.", "bert.pooler.")) or any(
        name.startswith(f"bert.encoder.layer.{i}.") for i in range(first, 6)
    )


def score_pairs(model: Any, tokenizer: Any, pairs: Sequence[dict[str, Any]]) -> list[float]:
    import torch

    model.eval()
    scores: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), 32):
            batch = pairs[start : start + 32]
            encoded = encode_pairs(tokenizer, [(p["question"], p["passage"]) for p in batch])
            scores.extend(torch.sigmoid(model(**encoded).logits.squeeze(-1)).tolist())
    return scores


def held_out_figures(
    pairs: Sequence[dict[str, Any]], scores: Sequence[float], threshold: float
) -> dict[str, Any]:
    labels = [p["label"] for p in pairs]
    right = [(s >= threshold) == bool(y) for y, s in zip(labels, scores, strict=True)]
    figures: dict[str, Any] = {"pairs": len(pairs), "auc": round(auc(labels, scores), 4),
                               "accuracy": round(sum(right) / len(right), 4), "threshold": threshold}  # fmt: skip
    for kind in KINDS:
        kept = [r for p, r in zip(pairs, right, strict=True) if p["kind"] == kind]
        figures[f"accuracy_{kind}"] = round(sum(kept) / len(kept), 4) if kept else None
        if kind != "positive":  # how well this kind of negative is told from the positives
            sub = [
                (p["label"], s) for p, s in zip(pairs, scores, strict=True) if p["kind"] in ("positive", kind)
            ]
            figures[f"auc_positive_vs_{kind}"] = round(auc([y for y, _ in sub], [s for _, s in sub]), 4)
    return figures


def fit(data: str, seed: int, epochs: int) -> tuple[Any, Any, dict[str, Any]]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from mtrag_graph import settings
    from mtrag_graph.models.bundled import minilm_path

    settings.offline_hub()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    pairs = build_pairs(data, seed)
    train = [p for p in pairs if p["split"] == "train"]
    held = [p for p in pairs if p["split"] == "held-out"]
    base = str(minilm_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = load_model(base, AutoModelForSequenceClassification)
    for name, parameter in model.named_parameters():
        parameter.requires_grad = trainable(name)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=LEARNING_RATE, weight_decay=0.01)
    rng = random.Random(seed)
    steps = epochs * -(-len(train) // BATCH)
    warmup = max(1, int(steps * WARMUP_SHARE))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    positives = sum(p["label"] for p in train)
    pos_weight = torch.tensor((len(train) - positives) / positives)
    step, started = 0, time.time()
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for batch in batches(train, rng):
            encoded = encode_pairs(tokenizer, [(p["question"], p["passage"]) for p in batch])
            logits = model(**encoded).logits.squeeze(-1)
            labels = torch.tensor([float(p["label"]) for p in batch])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total += loss.item() * len(batch)
            step += 1
            if step % 20 == 0:
                print(f"epoch {epoch + 1} step {step}/{steps} loss {loss.item():.4f} "
                      f"{time.time() - started:.0f}s", flush=True)  # fmt: skip
        print(
            f"epoch {epoch + 1}: mean loss {total / len(train):.4f}, {time.time() - started:.0f}s", flush=True
        )
    scores = score_pairs(model, tokenizer, held)
    record = {
        "seed": seed, "epochs": epochs, "batch": BATCH, "learning_rate": LEARNING_RATE,
        "trained_layers": TRAINED_LAYERS, "max_length": MAX_LENGTH, "train_seconds": round(time.time() - started),
        "train_pairs": len(train), "held_out_pairs": len(held),
        "held_out": held_out_figures(held, scores, 0.5),
    }  # fmt: skip
    return model, tokenizer, {**record, "held_out_scores": scores}


def save(model: Any, folder: Path) -> Path:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    # rounded through fp16 first, so a file of fp16 tensors converts to the same bytes
    tensors = {name: t.detach().half().float() for name, t in model.state_dict().items() if trainable(name)}
    path = folder / WEIGHTS.name
    save_file(quantize(tensors), str(path))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="the MTRAG data folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("-o", "--output", required=True, help="folder for the weights and fit.json")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("--data or MTRAG_DATA is required")
    model, _, record = fit(args.data, args.seed, args.epochs)
    path = save(model, Path(args.output))
    record.pop("held_out_scores")
    record.update({"weights": path.name, "bytes": path.stat().st_size, "sha256": weights_sha256(path)})
    (Path(args.output) / "fit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
