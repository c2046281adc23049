"""Several prediction files side by side, with a paired bootstrap CI of each system's HM3 difference."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.measure.evaluation.fitted import shipped_reference_rating
from mtrag_graph.measure.evaluation.metrics import CONDITIONED
from mtrag_graph.measure.evaluation.report import _fmt
from mtrag_graph.tasks import ANSWERABILITY, read_jsonl

N_RESAMPLES = 1000
SEED = 0


def _conditioned_matrix(rows: dict[str, dict[str, Any]], task_ids: Sequence[str]) -> np.ndarray:
    """(tasks x 3) conditioned RB_alg / RB_llm / RL_F, NaN where missing."""
    return np.array(
        [
            [np.nan if (v := rows[t]["conditioned"].get(m)) is None else v for m in CONDITIONED]
            for t in task_ids
        ],
        dtype=float,
    ).reshape(len(task_ids), len(CONDITIONED))


def _hm3_rows(means: np.ndarray) -> np.ndarray:
    """HM3 of each row of (k x 3) means; 0 when a part is 0, NaN when a part is missing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        result = 3 / np.sum(1 / means, axis=1)
    result[np.any(means == 0, axis=1)] = 0.0
    return result


def paired_bootstrap_hm3(
    a: dict[str, dict[str, Any]],
    b: dict[str, dict[str, Any]],
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """HM3(b) - HM3(a) on the tasks both hold, with a 95% percentile CI from resampling tasks (paired)."""
    common = sorted(set(a) & set(b))
    if not common:
        return {"n_tasks": 0, "delta": None, "ci95": None}
    ma, mb = _conditioned_matrix(a, common), _conditioned_matrix(b, common)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(common), size=(n_resamples, len(common)))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-missing column
        point = _hm3_rows(np.nanmean(mb, axis=0)[None]) - _hm3_rows(np.nanmean(ma, axis=0)[None])
        deltas = _hm3_rows(np.nanmean(mb[index], axis=1)) - _hm3_rows(np.nanmean(ma[index], axis=1))
    deltas = deltas[~np.isnan(deltas)]
    if np.isnan(point[0]) or not len(deltas):
        return {"n_tasks": len(common), "delta": None, "ci95": None}
    low, high = np.percentile(deltas, [2.5, 97.5])
    return {
        "n_tasks": len(common),
        "delta": float(point[0]),
        "ci95": [float(low), float(high)],
        "share_above_zero": float(np.mean(deltas > 0)),
        "n_resamples": n_resamples,
        "seed": seed,
    }


# Scores that no candidate selector of the graph reads: against the reference answer, or built from
# such scores (RB_alg adds BERTScore K-precision against the passages, which the selector does not
# compute either). Compared with the same paired bootstrap as HM3.
SELECTOR_INDEPENDENT = (
    ("rouge_l", "raw", "ROUGE-L"),
    ("bert_rec", "raw", "Bert-Rec"),
    ("rb_alg", "conditioned", "RB_alg^c"),
)
NOT_A_PICK = (None, "none", "skipped")


def judge_picks(predictions: str | Path) -> dict[str, int]:
    """How many answers of a predictions file a candidate judge picked, by judge name (from each
    prediction's ``route.judgement``; a lone candidate or all failing is no pick)."""
    picks: dict[str, int] = {}
    for _, obj, error in read_jsonl(predictions):
        route = obj.get("route") if not error and isinstance(obj, dict) else None
        judgement = route.get("judgement") if isinstance(route, dict) else None
        judge = judgement.get("judge") if isinstance(judgement, dict) else None
        if judge not in NOT_A_PICK:
            picks[str(judge)] = picks.get(str(judge), 0) + 1
    return picks


def selector_overlap(config: dict[str, Any]) -> dict[str, str]:
    """For each reported metric: what it shares with the fitted answer judge that picks an ensemble's
    answer (``judge_method="answer"``, e.g. the ``duo`` candidates), or ``"no"``.

    The judge's preference reads lex_precision, passage_coverage, sem_claim_min (MiniLM) and declines;
    its faithfulness reads lex_precision, bigram_precision, unsupported_words and sem_claim_mean.
    """
    fitted = bool(config.get("ratings"))
    pattern_idk = config.get("idk_method") in ("pattern", "pattern+judge")
    idk = (
        "conditioned by the refusal detector, which the selector also reads (its declines feature)"
        if pattern_idk
        else "no"
    )
    shared_faith = "yes: it is the selector's own faithfulness (lex_precision is in both)"
    return {
        "HM3": "yes, through RB_llm^c and RL_F^c" if fitted else ("partly: " + idk if pattern_idk else "no"),
        "RB_alg^c": "no; " + idk if pattern_idk else "no",
        "RB_llm^c": f"yes: {_faithfulness_weight():.3f} x the selector's faithfulness"
        if fitted
        else ("partly: " + idk if pattern_idk else "no"),
        "RL_F^c": shared_faith if fitted else ("partly: " + idk if pattern_idk else "no"),
        "ROUGE-L": "no (against the reference)",
        "Bert-Rec": "no (against the reference)",
    }


def _faithfulness_weight() -> float:
    return shipped_reference_rating().weights.get("faithfulness", 0.0)


def paired_bootstrap_mean(
    a: dict[str, dict[str, Any]],
    b: dict[str, dict[str, Any]],
    metric: str,
    kind: str,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """mean(b) - mean(a) of one per-task score (``kind`` "raw" or "conditioned") on the tasks both
    hold with a value, with a 95% percentile CI from resampling those tasks (paired)."""
    key = "scores" if kind == "raw" else "conditioned"
    common = sorted(
        t
        for t in set(a) & set(b)
        if a[t].get(key, {}).get(metric) is not None and b[t].get(key, {}).get(metric) is not None
    )
    if not common:
        return {"n_tasks": 0, "delta": None, "ci95": None}
    diff = np.array([b[t][key][metric] - a[t][key][metric] for t in common], dtype=float)
    rng = np.random.default_rng(seed)
    deltas = diff[rng.integers(0, len(common), size=(n_resamples, len(common)))].mean(axis=1)
    low, high = np.percentile(deltas, [2.5, 97.5])
    return {
        "n_tasks": len(common),
        "delta": float(diff.mean()),
        "ci95": [float(low), float(high)],
        "share_above_zero": float(np.mean(deltas > 0)),
        "n_resamples": n_resamples,
        "seed": seed,
    }


def _mean_of(rows: dict[str, dict[str, Any]], metric: str, kind: str) -> float | None:
    key = "scores" if kind == "raw" else "conditioned"
    values = [r.get(key, {}).get(metric) for r in rows.values()]
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def compare(systems: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    """``systems``: name -> (report, per-task rows by task_id). The first system is the baseline."""
    names = list(systems)
    baseline_rows = systems[names[0]][1]
    classes = [
        c for c in ANSWERABILITY if any(c in report["by_answerability"] for report, _ in systems.values())
    ]
    return {
        "baseline": names[0],
        "by_answerability": {
            cls: [
                {
                    "name": name,
                    "n": report["by_answerability"].get(cls, {}).get("n", 0),
                    "hm3": report["by_answerability"].get(cls, {}).get("hm3"),
                    "vs_baseline": None
                    if i == 0
                    else paired_bootstrap_hm3(_of_class(baseline_rows, cls), _of_class(rows, cls)),
                }
                for i, (name, (report, rows)) in enumerate(systems.items())
            ]
            for cls in classes
        },
        "systems": [
            {
                "name": name,
                "n": report["overall"]["n"],
                "hm3": report["overall"]["hm3"],
                "conditioned": report["overall"]["conditioned"],
                "raw": report["overall"].get("raw", {}),
                "judge_picks": report.get("config", {}).get("judge_picks") or {},
                "vs_baseline": None if i == 0 else paired_bootstrap_hm3(baseline_rows, rows),
                "selector_independent": {
                    label: {
                        "mean": _mean_of(rows, metric, kind),
                        "vs_baseline": None
                        if i == 0
                        else paired_bootstrap_mean(baseline_rows, rows, metric, kind),
                    }
                    for metric, kind, label in SELECTOR_INDEPENDENT
                },
            }
            for i, (name, (report, rows)) in enumerate(systems.items())
        ],
        "shares_selector_inputs": selector_overlap(systems[names[0]][0].get("config", {})),
    }


def _of_class(rows: dict[str, dict[str, Any]], answerability: str) -> dict[str, dict[str, Any]]:
    return {t: r for t, r in rows.items() if r.get("answerability") == answerability}


def _delta_cells(vs: dict[str, Any] | None) -> str:
    if not vs:
        return "baseline | – | –"
    ci = vs.get("ci95")
    return (
        f"{_fmt(vs.get('delta'))} | "
        + (f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "–")
        + f" | {_fmt(vs.get('share_above_zero'))}"
    )


def _flagged(label: str, overlap: dict[str, str]) -> str:
    return f"{label} †" if overlap.get(label, "no").startswith("yes") else label


def render_comparison(result: dict[str, Any], warnings: Sequence[str] = ()) -> str:
    overlap = result.get("shares_selector_inputs") or {}
    lines = ["# MTRAG comparison", ""]
    lines += [f"> **Warning:** {w}." for w in warnings]
    lines += [
        "",
        f"ΔHM3 is each system minus the baseline (`{result['baseline']}`) on the tasks both hold, with a "
        f"95% paired bootstrap CI over tasks ({N_RESAMPLES} resamples, seed {SEED}).",
        "",
        "Columns marked † read what the fitted answer judge reads, the judge that picks the answers of an "
        "answer-judge ensemble (`duo`): they favour such a system. Read them with the selector-independent "
        "scores below.",
        "",
        "| system | n | "
        + " | ".join(_flagged(label, overlap) for label in ("HM3", "RB_alg^c", "RB_llm^c", "RL_F^c"))
        + " | ΔHM3 | 95% CI | P(Δ>0) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["systems"]:
        lines.append(
            f"| {s['name']} | {s['n']} | {_fmt(s['hm3'])} | "
            + " | ".join(_fmt(s["conditioned"][m]) for m in CONDITIONED)
            + f" | {_delta_cells(s['vs_baseline'])} |"
        )
    lines += _selector_section(result)
    by_class = result.get("by_answerability") or {}
    if by_class:
        lines += [
            "",
            "Per answerability class (HM3 of the class's tasks; the same paired bootstrap within the class):",
            "",
            "| class | system | n | HM3 | ΔHM3 | 95% CI | P(Δ>0) |",
            "|---|---|---|---|---|---|---|",
        ]
        for cls, entries in by_class.items():
            for s in entries:
                lines.append(
                    f"| {cls} | {s['name']} | {s['n']} | {_fmt(s['hm3'])} | {_delta_cells(s['vs_baseline'])} |"
                )
    return "\n".join(lines) + "\n"


def _selector_section(result: dict[str, Any]) -> list[str]:
    """Which numbers share inputs with the answer judge that picks an ensemble's answer, and the scores
    that do not, each with its own paired interval."""
    overlap = result.get("shares_selector_inputs") or {}
    lines = [
        "",
        "## Scores the candidate selector never saw",
        "",
        "A system whose answers a fitted answer judge picked (the `duo` / `ensemble-local` candidates, "
        '`judge_method="answer"`) is favoured by any score that reads what that judge reads. Answers '
        "picked by a judge, per system: "
        + "; ".join(
            f"`{s['name']}` "
            + (", ".join(f"{n} by {j}" for j, n in s.get("judge_picks", {}).items()) or "none")
            for s in result["systems"]
        )
        + ".",
        "",
        "| metric | shares inputs with the answer-judge selector |",
        "|---|---|",
        *[f"| {metric} | {shared} |" for metric, shared in overlap.items()],
        "",
        "Selector-independent scores (against the reference answer; RB_alg adds BERTScore K-precision "
        "against the passages), each system minus the baseline with the same paired bootstrap:",
        "",
        "| system | "
        + " | ".join(f"{label} | Δ | 95% CI | P(Δ>0)" for _, _, label in SELECTOR_INDEPENDENT)
        + " |",
        "|---|" + "---|---|---|---|" * len(SELECTOR_INDEPENDENT),
    ]
    for s in result["systems"]:
        cells = []
        for _, _, label in SELECTOR_INDEPENDENT:
            entry = (s.get("selector_independent") or {}).get(label, {})
            cells.append(f"{_fmt(entry.get('mean'))} | {_delta_cells(entry.get('vs_baseline'))}")
        lines.append(f"| {s['name']} | " + " | ".join(cells) + " |")
    return lines
