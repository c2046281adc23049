"""Per-task rows aggregated into ``report.json``, ``report.md`` and a PNG chart of HM3 per answerability."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.measure.evaluation.bertscore import OFFICIAL_ENCODER, OFFICIAL_LAYER
from mtrag_graph.measure.evaluation.metrics import CONDITIONED, hm3, mean
from mtrag_graph.tasks import ANSWERABILITY

RAW = ("rouge_l", "bert_rec", "bert_kprec", "rb_alg", "rb_llm", "rl_f")
LABELS = {
    "hm3": "HM3",
    "rb_alg": "RB_alg",
    "rb_llm": "RB_llm",
    "rl_f": "RL_F",
    "rouge_l": "ROUGE-L",
    "bert_rec": "Bert-Rec",
    "bert_kprec": "Bert-K-Prec",
    "idk_rate": "IDK rate",
    "clarify_rate": "clarify rate",
}
TIMED = ("rouge", "bert", "idk", "clarify", "rl_f_statements", "rb_llm", "rl_f", "citations")


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means of one group of tasks: conditioned metrics and HM3, raw metrics, IDK / clarification rates."""
    cond = {name: mean(r["conditioned"].get(name) for r in rows) for name in CONDITIONED}
    raw = {name: mean(r["scores"].get(name) for r in rows) for name in RAW}
    return {
        "n": len(rows),
        "hm3": hm3(cond["rb_alg"], cond["rb_llm"], cond["rl_f"]),
        "conditioned": cond,
        "raw": raw,
        "idk_rate": mean(r["scores"].get("idk") for r in rows),
        "clarify_rate": mean(r["scores"].get("clarify") for r in rows),
        # share of the answering responses with a number or name the passages and conversation lack
        "fabrication_rate": mean(r["scores"].get("fabrication") for r in rows),
        "citation_precision": mean(r["scores"].get("citation_precision") for r in rows),
        "cited_share": mean(r["scores"].get("cited_share") for r in rows),
    }


def _groups(rows: Sequence[dict[str, Any]], key: str, order: Sequence[str] = ()) -> dict[str, Any]:
    values = {r.get(key) or "unknown" for r in rows}
    names = [v for v in order if v in values] + sorted(values - set(order))
    return {name: summarize([r for r in rows if (r.get(key) or "unknown") == name]) for name in names}


def provenance_warnings(
    judge: str | None,
    judge_official: bool,
    encoder: str | None,
    encoder_official: bool,
    ratings: str | None = None,
):
    warnings = []
    if ratings:
        warnings.append(
            f"RB_llm and RL_F come from the {ratings} models of mtrag_graph/measure/evaluation/fitted.py (no LLM call; "
            "validated on the golden file's human ratings in benchmarks/results/judges.md), not "
            "from an LLM judge: not comparable with published leaderboards"
        )
    if judge and not judge_official:
        warnings.append(
            f"judge '{judge}' is not the official one (gpt-4o-mini): RB_llm, RL_F and the IDK / "
            "clarification verdicts are not comparable with published leaderboards"
        )
    if encoder and not encoder_official:
        warnings.append(
            f"BERTScore encoder '{encoder}' is not the official one ({OFFICIAL_ENCODER}, layer "
            f"{OFFICIAL_LAYER}, baseline-rescaled): Bert-Rec, Bert-K-Prec and RB_alg are not comparable "
            "with published leaderboards"
        )
    return warnings


def build_report(
    rows: Sequence[dict[str, Any]], config: dict[str, Any], skipped: Sequence[str] = ()
) -> dict[str, Any]:
    seconds = {
        name: mean(
            r["seconds"].get(name) for r in rows if not r.get("reused") and name in r.get("seconds", {})
        )
        for name in TIMED
    }
    return {
        "config": config,
        "warnings": provenance_warnings(
            config.get("judge"),
            config.get("judge_official", False),
            config.get("encoder"),
            config.get("encoder_official", False),
            config.get("ratings"),
        ),
        "n_tasks": len(rows),
        "skipped_rows": list(skipped),
        "overall": summarize(rows),
        "by_answerability": _groups(rows, "answerability", ANSWERABILITY),
        "by_domain": _groups(rows, "domain"),
        "seconds_per_task": {k: v for k, v in seconds.items() if v is not None},
        "reused_rows": sum(1 for r in rows if r.get("reused")),
    }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _table(groups: dict[str, dict[str, Any]], first: str) -> list[str]:
    head = [
        first,
        "n",
        "HM3",
        "RB_alg^c",
        "RB_llm^c",
        "RL_F^c",
        "ROUGE-L",
        "Bert-Rec",
        "Bert-K-Prec",
        "RB_alg",
        "RB_llm",
        "RL_F",
        "IDK rate",
        "clarify rate",
        "fabrication",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in groups.items():
        cells = [name, str(s["n"]), _fmt(s["hm3"])]
        cells += [_fmt(s["conditioned"][m]) for m in CONDITIONED]
        cells += [_fmt(s["raw"][m]) for m in RAW]
        cells += [_fmt(s["idk_rate"]), _fmt(s["clarify_rate"]), _fmt(s.get("fabrication_rate"))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    config = report["config"]
    lines = [
        f"# MTRAG generation evaluation: {config.get('predictions', '')}",
        "",
        f"- tasks scored: {report['n_tasks']} (rows skipped: {len(report['skipped_rows'])})",
        f"- metrics: {', '.join(config.get('metrics', []))}",
        f"- judge: {config.get('judge') or 'none'}",
        f"- BERTScore encoder: {config.get('encoder') or 'none'}",
        "",
    ]
    lines += [f"> **Warning:** {w}." for w in report["warnings"]]
    if report["warnings"]:
        lines.append("")
    lines += [
        "`^c` = conditioned on answerability (IDK / clarification); HM3 = harmonic mean of the three "
        "conditioned means. Raw columns are unconditioned means.",
        "",
        "## By answerability",
        "",
        *_table({"all": report["overall"], **report["by_answerability"]}, "class"),
        "",
        "## By domain",
        "",
        *_table(report["by_domain"], "domain"),
        "",
    ]
    overall = report["overall"]
    if overall.get("citation_precision") is not None or overall.get("cited_share") is not None:
        lines += [
            "## Citations",
            "",
            f"- citation precision: {_fmt(overall.get('citation_precision'))} (share of (sentence, cited "
            "passage) pairs where that passage alone holds the sentence's content words, by the judging "
            "layer's claim support)",
            f"- sentences citing a passage: {_fmt(overall.get('cited_share'))}",
            "",
        ]
    if report["seconds_per_task"]:
        lines += ["## Cost", "", "| metric | seconds per task |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in report["seconds_per_task"].items()]
        lines += ["", f"Rows reused from an earlier run (not timed): {report['reused_rows']}.", ""]
    if report["skipped_rows"]:
        lines += ["## Skipped rows", ""] + [f"- {s}" for s in report["skipped_rows"]] + [""]
    return "\n".join(lines)


def write_chart(report: dict[str, Any], path: Path) -> None:
    """Grouped bars: HM3 and its three conditioned parts, overall and per answerability class."""
    import matplotlib  # noqa: PLC0415 - measure extra (matplotlib): loaded when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 - as above

    groups = {"all": report["overall"], **report["by_answerability"]}
    series = {
        "HM3": [g["hm3"] for g in groups.values()],
        **{LABELS[m]: [g["conditioned"][m] for g in groups.values()] for m in CONDITIONED},
    }
    figure, axes = plt.subplots(figsize=(1.6 + 1.5 * len(groups), 4))
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(groups))]
        axes.bar(xs, [v or 0.0 for v in values], width, label=label)
    axes.set_xticks(range(len(groups)), [f"{name}\n(n={g['n']})" for name, g in groups.items()])
    axes.set_ylim(0, 1)
    axes.set_ylabel("score")
    config = report["config"]
    axes.set_title(
        f"judge: {config.get('judge') or 'none'} | encoder: {config.get('encoder') or 'none'}", fontsize=8
    )
    axes.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    figure.tight_layout()
    _atomic_write(path, lambda tmp: figure.savefig(tmp, dpi=120, format="png"))
    plt.close(figure)


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_report(report: dict[str, Any], out_dir: Path, chart: bool = True) -> list[Path]:
    """``report.json``, ``report.md`` and (with any HM3 part present) ``hm3_by_answerability.png``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "report.json", out_dir / "report.md"]

    def dump_json(tmp: str) -> None:
        Path(tmp).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")

    _atomic_write(paths[0], dump_json)
    _atomic_write(paths[1], lambda tmp: Path(tmp).write_text(render_markdown(report), encoding="utf-8"))
    if chart:
        paths.append(out_dir / "hm3_by_answerability.png")
        write_chart(report, paths[-1])
    return paths
