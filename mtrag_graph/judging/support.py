"""Support of an answer by its passages, claim by claim, and its agreement with the other candidates.

Every sentence of the answer is a claim. A claim's lexical support is the share of its content-word stems
found in the passages; its semantic support is its best cosine similarity (sentence embeddings) with a
passage sentence. The answer's features are the means and minima of those over its claims, plus the
share of its word bigrams that occur in the passages, its consensus with the other candidates (mean
content-word F1: minimum Bayes risk), its similarity to the question, its length and whether it
declines.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from mtrag_graph.text import bigrams, claims, content_stems, declines

FEATURES = (
    "lex_precision",
    "lex_claim_min",
    "bigram_precision",
    "unsupported_words",
    "passage_coverage",
    "sem_claim_mean",
    "sem_claim_min",
    "question_similarity",
    "consensus",
    "log_chars",
    "declines",
)


class SentenceEmbedder(Protocol):
    """Anything with ``embed(texts) -> L2-normalised rows`` (``models.embeddings.Embedder``)."""

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray: ...


RELEVANT_SENTENCES = 3  # passage sentences closest to the question, whose content completeness counts


def lexical_features(answer: str, passages: Sequence[str], question: str = "") -> dict[str, float]:
    """Content-word precision of the whole answer, its least supported claim, bigram precision, and
    -log(1 + the number of distinct content words in neither the passages nor the question)."""
    known = set(content_stems(" ".join(passages)))
    known_bigrams = set(bigrams(" ".join(passages)))
    stems = content_stems(answer)
    claim_stems = [content_stems(s) for s in claims(answer)]
    claim_support = [sum(s in known for s in c) / len(c) for c in claim_stems if c]
    answer_bigrams = bigrams(answer)
    unsupported = set(stems) - known - set(content_stems(question))
    return {
        "unsupported_words": -math.log1p(len(unsupported)),
        "lex_precision": sum(s in known for s in stems) / len(stems) if stems else 0.0,
        "lex_claim_min": min(claim_support) if claim_support else 0.0,
        "bigram_precision": (
            sum(b in known_bigrams for b in answer_bigrams) / len(answer_bigrams) if answer_bigrams else 0.0
        ),
    }


def semantic_features(
    answer: str, passages: Sequence[str], question: str, embedder: SentenceEmbedder
) -> dict[str, float]:
    """Per-claim best cosine with a passage sentence (mean, min), the answer's cosine with the question,
    and the share of the content words of the passage sentences closest to the question that it uses."""
    answer_claims = claims(answer) or [answer]
    evidence = [s for p in passages for s in claims(p)]
    vectors = embedder.embed([*answer_claims, question, answer, *evidence])
    claim_vectors = vectors[: len(answer_claims)]
    question_vector, answer_vector = vectors[len(answer_claims)], vectors[len(answer_claims) + 1]
    evidence_vectors = vectors[len(answer_claims) + 2 :]
    features = {"question_similarity": float(answer_vector @ question_vector)}
    if not evidence:
        return {**features, "sem_claim_mean": 0.0, "sem_claim_min": 0.0, "passage_coverage": 0.0}
    best = (claim_vectors @ evidence_vectors.T).max(axis=1)
    closest = np.argsort(-(evidence_vectors @ question_vector))[:RELEVANT_SENTENCES]
    asked = set(content_stems(question))
    relevant = Counter(s for i in closest for s in content_stems(evidence[i]) if s not in asked)
    used = set(content_stems(answer))
    coverage = sum(n for s, n in relevant.items() if s in used) / sum(relevant.values()) if relevant else 0.0
    features.update(
        sem_claim_mean=float(best.mean()), sem_claim_min=float(best.min()), passage_coverage=coverage
    )
    return features


def token_f1(a: str, b: str) -> float:
    """F1 of the content-word stems of two texts."""
    left, right = Counter(content_stems(a)), Counter(content_stems(b))
    overlap = sum((left & right).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(left.values()), overlap / sum(right.values())
    return 2 * precision * recall / (precision + recall)


def consensus(answers: Sequence[str]) -> list[float]:
    """Each answer's mean F1 with the others (0 for a single answer)."""
    if len(answers) < 2:
        return [0.0] * len(answers)
    return [
        sum(token_f1(a, b) for j, b in enumerate(answers) if j != i) / (len(answers) - 1)
        for i, a in enumerate(answers)
    ]


def answer_features(
    question: str, passages: Sequence[str], answers: Sequence[str], embedder: SentenceEmbedder
) -> list[dict[str, float]]:
    """The features of each of a task's candidate answers (see ``FEATURES``)."""
    agreement = consensus(answers)
    rows = []
    for answer, agree in zip(answers, agreement, strict=True):
        row = lexical_features(answer, passages, question)
        row.update(semantic_features(answer, passages, question, embedder))
        row.update(consensus=agree, log_chars=math.log1p(len(answer)), declines=float(declines(answer)))
        rows.append({name: row[name] for name in FEATURES})
    return rows
