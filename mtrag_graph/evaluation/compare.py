"""Several prediction files side by side, with a paired bootstrap CI of each system's HM3 difference."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from mtrag_graph.evaluation.metrics import CONDITIONED
from mtrag_graph.evaluation.report import _fmt
from mtrag_graph.tasks import ANSWERABILITY

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
                "vs_baseline": None if i == 0 else paired_bootstrap_hm3(baseline_rows, rows),
            }
            for i, (name, (report, rows)) in enumerate(systems.items())
        ],
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


def render_comparison(result: dict[str, Any], warnings: Sequence[str] = ()) -> str:
    lines = ["# MTRAG comparison", ""]
    lines += [f"> **Warning:** {w}." for w in warnings]
    lines += [
        "",
        f"ΔHM3 is each system minus the baseline (`{result['baseline']}`) on the tasks both hold, with a "
        f"95% paired bootstrap CI over tasks ({N_RESAMPLES} resamples, seed {SEED}).",
        "",
        "| system | n | HM3 | RB_alg^c | RB_llm^c | RL_F^c | ΔHM3 | 95% CI | P(Δ>0) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["systems"]:
        lines.append(
            f"| {s['name']} | {s['n']} | {_fmt(s['hm3'])} | "
            + " | ".join(_fmt(s["conditioned"][m]) for m in CONDITIONED)
            + f" | {_delta_cells(s['vs_baseline'])} |"
        )
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
