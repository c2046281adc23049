"""Which model-free signals tell a passage set that holds the answer from one that does not (the gate).

The shipped gate (``mtrag_graph/data/gate_classifier.json``) is four numbers fitted on 60 positives and 110
negatives of the tuning split. This replay builds the tuning split's whole gate set (every answerable turn
with its reference passages; every UNANSWERABLE turn with the passages the project's retrieval finds for
it; ``--other`` answerable turns given another same-domain conversation's passages), computes candidate
signals for each item once (MiniLM only, no language model), and compares feature sets by 5-fold
cross-validation grouped by conversation: AUC, and at the threshold that turns away at most
``--max-positive-loss`` of the positives (chosen on the training folds), the share of each negative kind
turned away.

    python -m research.gate_signals --data $MTRAG_DATA --index indexes/mini -o runs/gate-signals
    python -m research.gate_signals --data $MTRAG_DATA --index indexes/mini -o runs/gate-signals-ce --cross-encoder

Only the tuning split (``tasks/mtrag_reference.jsonl``) is read. ``--cross-encoder`` adds the bundled
cross-encoder's scores of the question against each passage (``models.cross_encoder``, through FlagEmbedding)
and keeps only the conversations the cross-encoder was not trained on (``research.reranker_fit.split_of``
not ``train``, about 30%), so its scores are not those of pairs it learnt.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.context import Context
from mtrag_graph.measure.decisions.retrieval import index_retriever
from mtrag_graph.measure.decisions.sets import gate_items, load_split
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.nodes.answerability_gate import evidence_features
from mtrag_graph.text import content_words, sentences, words

CURRENT = ("cos_max", "cos_mean", "overlap_max", "overlap_all")  # the shipped gate's features
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_NUMBER = re.compile(r"\d")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")


def _answer_type(question: str) -> str | None:
    q = question.lower()
    if re.search(r"\bhow (many|much|long|old|far|often)\b|\bwhat (percentage|number|amount)\b", q):
        return "number"
    if re.search(r"\bwhen\b|\bwhat year\b|\bwhat date\b", q):
        return "date"
    if re.search(r"\bwho\b|\bwhose\b", q):
        return "name"
    return None


def _has_type(kind: str | None, text: str) -> float:
    if kind is None:
        return 0.5
    if kind == "date":
        return float(bool(_YEAR.search(text)))
    if kind == "number":
        return float(bool(_NUMBER.search(text)))
    return float(bool(_NAME.search(text)))


def _pairs(text: str, kept_words: set[str]) -> set[tuple[str, str]]:
    """Consecutive content words of ``text`` (``kept_words``: its content words)."""
    kept = [w for w in words(text) if w in kept_words]
    return set(zip(kept, kept[1:], strict=False))


def passage_texts(passages: Sequence[dict[str, Any]]) -> list[str]:
    """Each passage as the gate reads it (``answerability_gate.evidence_features``): title, then text."""
    return [f"{p.get('title') or ''}\n{p.get('text', '')}".strip() for p in passages]


def signals(question: str, passages: Sequence[dict[str, Any]], context: Context) -> dict[str, float]:
    """Every candidate signal of one (question, passages) item: the gate's own four
    (``answerability_gate.evidence_features``) and the candidates, on ``context.embedder``."""
    texts = passage_texts(passages)
    if not texts:
        return {}
    shipped = evidence_features(question, list(passages), context)
    flat = [s for t in texts for s in (sentences(t)[:40] or [t])]
    # normalised and kept by the embedder: the passages evidence_features embedded are not embedded again
    vectors = get_embedder(context.embedder).embed([question, *texts, *flat])
    q, doc, sent = vectors[0], vectors[1 : 1 + len(texts)], vectors[1 + len(texts) :]
    cos = doc @ q
    sent_cos = sent @ q
    qwords = content_words(question)
    per_words = [content_words(t) for t in texts]
    union = set().union(*per_words)
    qpairs = _pairs(question, qwords)
    pair_share = [len(qpairs & _pairs(t, w)) / len(qpairs) if qpairs else 0.5
                  for t, w in zip(texts, per_words, strict=True)]  # fmt: skip
    titles = " ".join(str(p.get("title") or "") for p in passages)
    kind = _answer_type(question)
    top_sentence = flat[int(np.argmax(sent_cos))]
    sentence_words = content_words(top_sentence)
    return {
        **shipped,
        "sent_cos_max": float(sent_cos.max()),
        "sent_cos_top3": float(np.sort(sent_cos)[-3:].mean()),
        "sent_overlap": len(qwords & sentence_words) / len(qwords) if qwords else 0.0,
        "pair_max": max(pair_share),
        "title_overlap": len(qwords & content_words(titles)) / len(qwords) if qwords else 0.0,
        "type_in_best": _has_type(kind, texts[int(np.argmax(cos))]),
        "type_in_top_sentence": _has_type(kind, top_sentence),
        "cos_spread": float(cos.max() - cos.min()),
        "question_words": float(min(len(qwords), 12)),
        "missing_words": float(min(len(qwords - union), 6)),
    }


def cross_encoder_signals(question: str, passages: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The bundled cross-encoder's 0-1 scores of the question against each passage: best, mean, second."""
    from mtrag_graph.models.embeddings import get_reranker  # loads torch and FlagEmbedding

    texts = passage_texts(passages)
    scores = sorted(get_reranker("cross-encoder").score(question, texts), reverse=True)
    return {"ce_max": scores[0], "ce_mean": float(np.mean(scores)),
            "ce_second": scores[1] if len(scores) > 1 else scores[0]}  # fmt: skip


def build(data: str, index: str, other: int, seed: int, cross_encoder: bool = False) -> list[dict[str, Any]]:
    tasks = load_split(data, "tuning")
    items = gate_items(tasks, index_retriever(index), other_conversation=other, seed=seed)
    if cross_encoder:
        from research.reranker_fit import split_of

        items = [i for i in items if split_of(str(i["conversation_id"])) != "train"]
    context = Context()
    rows = []
    for n, item in enumerate(items):
        question, passages = str(item["question"]), item.get("passages") or []
        features = signals(question, passages, context)
        if cross_encoder and features:
            features |= cross_encoder_signals(question, passages)
        rows.append(
            {
                "item_id": item["item_id"],
                "conversation_id": item["conversation_id"],
                "kind": item["kind"],
                "label": bool(item["label"]),
                "features": features,
            }
        )
        if n % 100 == 0:
            print(f"{n}/{len(items)}", file=sys.stderr, flush=True)
    return [r for r in rows if r["features"]]


def compare(rows: list[dict[str, Any]], sets: dict[str, Sequence[str]], loss: float) -> str:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mtrag_graph.measure.decisions.metrics import best_threshold

    y = np.array([r["label"] for r in rows])
    groups = np.array([r["conversation_id"] for r in rows])
    kinds = np.array([r["kind"] for r in rows])
    lines = [
        "| features | AUC | positives turned away | unanswerable_retrieved turned away | other_conversation turned away |",
        "|---|---|---|---|---|",
    ]
    for name, features in sets.items():
        x = np.array([[r["features"][f] for f in features] for r in rows])
        scores = np.zeros(len(rows))
        decline = np.zeros(len(rows), dtype=bool)
        for train, test in GroupKFold(n_splits=5).split(x, y, groups):
            model = make_pipeline(
                StandardScaler(), LogisticRegression(class_weight="balanced", C=1.0, max_iter=2000)
            )
            model.fit(x[train], y[train])
            train_scores = model.predict_proba(x[train])[:, 1]
            threshold, _ = best_threshold(train_scores.tolist(), y[train].tolist(), max_positive_loss=loss)
            scores[test] = model.predict_proba(x[test])[:, 1]
            decline[test] = scores[test] < threshold
        cells = [f"{decline[kinds == k].sum()}/{(kinds == k).sum()}" for k in
                 ("positive", "unanswerable_retrieved", "other_conversation")]  # fmt: skip
        lines.append(f"| {name} | {roc_auc_score(y, scores):.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


FEATURE_SETS: dict[str, Sequence[str]] = {
    "shipped four": CURRENT,
    "+ sentence cosine": (*CURRENT, "sent_cos_max", "sent_cos_top3"),
    "+ sentence overlap": (*CURRENT, "sent_overlap"),
    "+ word pairs": (*CURRENT, "pair_max"),
    "+ titles": (*CURRENT, "title_overlap"),
    "+ answer type": (*CURRENT, "type_in_best", "type_in_top_sentence"),
    "+ spread, lengths": (*CURRENT, "cos_spread", "question_words", "missing_words"),
    "all": (
        *CURRENT,
        "sent_cos_max",
        "sent_cos_top3",
        "sent_overlap",
        "pair_max",
        "title_overlap",
        "type_in_best",
        "type_in_top_sentence",
        "cos_spread",
        "question_words",
        "missing_words",
    ),
}
CROSS_ENCODER_SETS: dict[str, Sequence[str]] = {
    "cross-encoder alone": ("ce_max", "ce_mean", "ce_second"),
    "shipped four + cross-encoder": (*CURRENT, "ce_max", "ce_mean", "ce_second"),
    "shipped four + cross-encoder best": (*CURRENT, "ce_max"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.gate_signals", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="the MTRAG data folder (its tasks/ file is read)")
    parser.add_argument("--index", required=True, help="an index of corpora/mini (mtrag-graph index)")
    parser.add_argument("--other", type=int, default=300, help="answerable turns moved onto other passages")
    parser.add_argument("--max-positive-loss", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cross-encoder", action="store_true",
        help="add the bundled cross-encoder's scores; only conversations it was not trained on",
    )  # fmt: skip
    parser.add_argument("-o", "--out", required=True, help="a folder: signals.jsonl and table.md")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table_rows = out / "signals.jsonl"
    if table_rows.exists():
        rows = [json.loads(line) for line in table_rows.read_text().splitlines()]
    else:
        rows = build(args.data, args.index, args.other, args.seed, args.cross_encoder)
        table_rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sets = dict(FEATURE_SETS)
    if all("ce_max" in r["features"] for r in rows):
        sets |= CROSS_ENCODER_SETS
    table = compare(rows, sets, args.max_positive_loss)
    (out / "table.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
