"""Algorithmic metrics and the answerability conditioning of the official MTRAG scorer.

Definitions follow IBM's ``mt-rag-benchmark/scripts/evaluation`` (re-implemented, not copied):
ROUGE-L is ``rouge-score``'s rougeL F-measure without stemming; RB_alg is the harmonic mean of
ROUGE-L and the BERTScore recall / max-over-passages precision, each BERTScore value mapped
from [-1, 1] to [0, 1] as (x + 1) / 2.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from functools import lru_cache

CONDITIONED = ("rb_alg", "rb_llm", "rl_f")
IDK_CLASSES = ("UNANSWERABLE", "CONVERSATIONAL")
UNDERSPECIFIED = "UNDERSPECIFIED"


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer  # noqa: PLC0415 - measure extra (rouge-score): loaded when ROUGE is first computed

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(response: str, target: str) -> float:
    """ROUGE-L F-measure of the response (prediction) against the target (reference)."""
    return _rouge_scorer().score(target, response)["rougeL"].fmeasure


def unit_interval(bert_value: float) -> float:
    """Map a (baseline-rescaled) BERTScore value from [-1, 1] to [0, 1], as the official RB_alg does."""
    return (bert_value + 1) / 2


def harmonic_mean3(a: float, b: float, c: float) -> float:
    """Harmonic mean of three values in [0, 1]; 0 when any is 0.

    ``statistics.harmonic_mean`` computes with exact fractions, so the result is correctly rounded
    and independent of the order: it reproduces every stored RB_agg of the golden file bit for bit,
    which the float formula 3abc / (ab + ac + bc) does not (off by one ulp in about half the rows).
    """
    if a == 0 or b == 0 or c == 0:
        return 0.0
    return statistics.harmonic_mean([a, b, c])


def rb_alg(bert_rec: float, rouge: float, bert_kprec: float | None) -> float:
    """RB_alg from raw BERT recall, ROUGE-L and raw BERT K-precision (None when there are no passages)."""
    recall = unit_interval(bert_rec)
    extractiveness = 0.0 if bert_kprec is None else unit_interval(bert_kprec)
    return harmonic_mean3(recall, rouge, extractiveness)


def condition(
    raw: float | None, answerability: str, idk: float | None, clarify: float | None = None
) -> float | None:
    """The official answerability conditioning of one raw metric value.

    UNDERSPECIFIED: 1 when the response asks for clarification, else 0. UNANSWERABLE and
    CONVERSATIONAL: 1 when the IDK judge says yes (1), else 0. ANSWERABLE and PARTIAL: 0 when the
    response says it does not know (IDK = 1), else the raw value. None when a needed verdict is missing.
    """
    if answerability == UNDERSPECIFIED:
        return None if clarify is None else (1.0 if clarify == 1 else 0.0)
    if idk is None:
        return None
    if answerability in IDK_CLASSES:
        return 1.0 if idk == 1 else 0.0
    return 0.0 if idk == 1 else raw


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None (pandas' skipna); None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def hm3(rb_alg_mean: float | None, rb_llm_mean: float | None, rl_f_mean: float | None) -> float | None:
    """HM3: harmonic mean of the three conditioned means; None when one is missing."""
    if rb_alg_mean is None or rb_llm_mean is None or rl_f_mean is None:
        return None
    return harmonic_mean3(rb_alg_mean, rb_llm_mean, rl_f_mean)
