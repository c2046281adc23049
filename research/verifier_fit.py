"""Train the answer verifier (``mtrag_graph/judging/verifier.py``): the bundled MiniLM as a cross-encoder
for "does this passage state the answer to this question?", on the train split of
``research.verifier_data``'s pairs; then score the held-out split.

    OMP_NUM_THREADS=1 python -m research.verifier_fit --data $MTRAG_DATA -o mtrag_graph/data/verifier/

One command, CPU, one thread: it builds the pairs (same seed, same pairs), fine-tunes the top
``TRAINED_LAYERS`` encoder layers and a one-logit head over the mean-pooled tokens (the embeddings and
lower layers stay the bundled model's: the shipped file stays small, and their outputs are computed once,
so an epoch runs only the trained layers), and writes those tensors (``verifier-head.safetensors``:
matrices int8 with a scale a row, the rest fp16) with ``fit.json`` (settings, data and held-out figures,
hash). Loss: binary cross-entropy with the positives weighted up to the negatives' count. The held-out
figures come from the full forward pass, as the product runs it (before the int8 rounding).
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
    HEAD,
    MAX_LENGTH,
    WEIGHTS,
    encode_pairs,
    load_network,
    mean_pool,
    quantize,
    weights_sha256,
)
from research.verifier_data import KINDS, build_pairs

TRAINED_LAYERS = 2  # of MiniLM-L6's six
LAYERS = 6
EPOCHS = 4
BATCH = 16
LEARNING_RATE = {"layers": 1e-4, "head": 1e-3}
WARMUP_SHARE = 0.1


def auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """Area under the ROC curve (ties count half)."""
    pos = [s for y, s in zip(labels, scores, strict=True) if y]
    neg = [s for y, s in zip(labels, scores, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def batches(items: Sequence[Any], rng: random.Random) -> list[list[Any]]:
    """Shuffled batches of items of similar length (less padding), in shuffled order."""
    order = list(items)
    rng.shuffle(order)
    chunks = [order[i : i + BATCH * 8] for i in range(0, len(order), BATCH * 8)]
    out: list[list[Any]] = []
    for chunk in chunks:
        chunk.sort(key=lambda item: item[0].shape[0])
        out.extend(chunk[i : i + BATCH] for i in range(0, len(chunk), BATCH))
    rng.shuffle(out)
    return out


def trainable(name: str) -> bool:
    """The encoder's top ``TRAINED_LAYERS`` layers."""
    return any(name.startswith(f"encoder.layer.{i}.") for i in range(LAYERS - TRAINED_LAYERS, LAYERS))


def frozen_states(encoder: Any, tokenizer: Any, pairs: Sequence[dict[str, Any]]) -> list[Any]:
    """Each pair's hidden states below the trained layers (fp32, unpadded): computed once, since the
    embeddings and the lower layers do not change, so an epoch runs only the trained layers."""
    import torch

    states = []
    with torch.inference_mode():
        for start in range(0, len(pairs), 32):
            batch = pairs[start : start + 32]
            encoded = encode_pairs(tokenizer, [(p["question"], p["passage"]) for p in batch])
            hidden = encoder(**encoded, output_hidden_states=True).hidden_states[LAYERS - TRAINED_LAYERS]
            for row, mask in zip(hidden, encoded["attention_mask"], strict=True):
                states.append(row[: int(mask.sum())].clone())
    return states


def top_forward(encoder: Any, head: Any, states: Sequence[Any]) -> Any:
    """Logits of a batch of frozen states through the trained layers and the head."""
    import torch

    length = max(s.shape[0] for s in states)
    hidden = torch.zeros(len(states), length, states[0].shape[1])
    mask = torch.zeros(len(states), length, dtype=torch.long)
    for i, s in enumerate(states):
        hidden[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = 1
    attention, _ = encoder._create_attention_masks(
        attention_mask=mask, encoder_attention_mask=None, embedding_output=hidden, encoder_hidden_states=None,
        cache=None,
    )  # fmt: skip
    for layer in encoder.encoder.layer[LAYERS - TRAINED_LAYERS :]:
        hidden = layer(hidden, attention_mask=attention)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden
    return head(mean_pool(hidden, mask)).squeeze(-1)


def score_pairs(encoder: Any, head: Any, tokenizer: Any, pairs: Sequence[dict[str, Any]]) -> list[float]:
    """The full forward pass, as the product runs it."""
    import torch

    encoder.eval()
    scores: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), 32):
            batch = pairs[start : start + 32]
            encoded = encode_pairs(tokenizer, [(p["question"], p["passage"]) for p in batch])
            logits = head(mean_pool(encoder(**encoded).last_hidden_state, encoded["attention_mask"])).squeeze(
                -1
            )
            scores.extend(torch.sigmoid(logits).tolist())
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


def train_top_layers(
    encoder: Any,
    head: Any,
    states: Sequence[Any],
    labels: Sequence[int],
    *,
    epochs: int,
    seed: int,
    started: float,
) -> None:
    """Train the encoder's top ``TRAINED_LAYERS`` layers and the head on the frozen ``states`` (their
    pairs' ``labels``, 1 or 0): AdamW, linear warm-up then decay, binary cross-entropy with the positives
    weighted up to the negatives' count; an epoch's mean loss printed. ``research.clarify_crossencoder``
    trains its cross-encoder with it too."""
    import torch

    for name, parameter in encoder.named_parameters():
        parameter.requires_grad = trainable(name)
    layers = [p for p in encoder.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        [
            {"params": layers, "lr": LEARNING_RATE["layers"]},
            {"params": head.parameters(), "lr": LEARNING_RATE["head"]},
        ],
        weight_decay=0.01,
    )
    rng = random.Random(seed)
    steps = epochs * -(-len(states) // BATCH)
    warmup = max(1, int(steps * WARMUP_SHARE))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    positives = sum(labels)
    pos_weight = torch.tensor((len(labels) - positives) / positives)
    items = [(state, float(label)) for state, label in zip(states, labels, strict=True)]
    step = 0
    for epoch in range(epochs):
        encoder.train()  # dropout in the trained layers (the frozen states were computed without)
        total = 0.0
        for batch in batches(items, rng):
            logits = top_forward(encoder, head, [state for state, _ in batch])
            targets = torch.tensor([label for _, label in batch])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, targets, pos_weight=pos_weight
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_([*layers, *head.parameters()], 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total += loss.item() * len(batch)
            step += 1
        print(f"epoch {epoch + 1}: mean loss {total / len(items):.4f}, step {step}/{steps}, "
              f"{time.time() - started:.0f}s", flush=True)  # fmt: skip


def train_and_score(
    train: Sequence[dict[str, Any]], held: Sequence[dict[str, Any]], *, epochs: int, seed: int
) -> tuple[Any, Any, list[float], float]:
    """The bundled MiniLM and a new head trained on ``train`` (pairs of "question", "passage" and "label";
    ``train_top_layers``), one torch thread, seeded; the held-out pairs' scores from the full forward pass,
    as the product runs it; and when training started (``time.time()``). ``research.evidence_scorer_fit``
    trains its sentence scorer with it too."""
    import torch
    from transformers import AutoTokenizer

    from mtrag_graph import settings
    from mtrag_graph.models.bundled import minilm_path

    settings.offline_hub()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    base = str(minilm_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    encoder, head = load_network(base)
    encoder.eval()
    started = time.time()
    states = frozen_states(encoder, tokenizer, train)
    print(f"frozen states of {len(train)} pairs: {time.time() - started:.0f}s", flush=True)
    train_top_layers(
        encoder, head, states, [p["label"] for p in train], epochs=epochs, seed=seed, started=started
    )
    return encoder, head, score_pairs(encoder, head, tokenizer, held), started


def fit(data: str, seed: int, epochs: int) -> tuple[Any, Any, dict[str, Any]]:
    pairs = build_pairs(data, seed)
    train = [p for p in pairs if p["split"] == "train"]
    held = [p for p in pairs if p["split"] == "held-out"]
    encoder, head, scores, started = train_and_score(train, held, epochs=epochs, seed=seed)
    record = {
        "seed": seed, "epochs": epochs, "batch": BATCH, "learning_rate": LEARNING_RATE,
        "trained_layers": TRAINED_LAYERS, "max_length": MAX_LENGTH, "train_seconds": round(time.time() - started),
        "train_pairs": len(train), "held_out_pairs": len(held),
        "held_out": held_out_figures(held, scores, 0.5),
    }  # fmt: skip
    return encoder, head, record


def save(encoder: Any, head: Any, folder: Path) -> Path:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tensors = {name: t.detach() for name, t in encoder.state_dict().items() if trainable(name)}
    tensors.update({f"{HEAD}{name}": t.detach() for name, t in head.state_dict().items()})
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
    encoder, head, record = fit(args.data, args.seed, args.epochs)
    path = save(encoder, head, Path(args.output))
    record.update({"weights": path.name, "bytes": path.stat().st_size, "sha256": weights_sha256(path)})
    (Path(args.output) / "fit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
