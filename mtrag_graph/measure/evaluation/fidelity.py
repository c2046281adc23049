"""Judge fidelity: how well the project's metrics and judges agree with people on the golden file.

``mtrag-graph evaluate --fidelity GOLDEN -o DIR`` scores the golden file's 477 responses (159 tasks x 3
systems) with the harness's metrics (``runner.score_item``, verdicts cached, rows resumable in
``DIR/harness/scores.jsonl``) and the candidate judge (the graph's ``judge_candidates`` scoring: one
pick of three per task, rows resumable in ``DIR/candidate_judge.jsonl``), then writes, per split
(``tune``, ``report``, ``all``) and beside the official metric values of the file:

- Spearman rho with the mean human faithfulness and completeness, pairwise and top-1 agreement with
  the human win-rate (``agreement``);
- the IDK verdicts' accuracy and Cohen's kappa against the official ``conditional_idk``;
- seconds per response of each metric, and of the candidate judge per task.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tqdm import tqdm

from mtrag_graph.judging import answer_judge_of
from mtrag_graph.measure.evaluation.agreement import (
    accuracy,
    cohen_kappa,
    pairwise_agreement,
    spearman,
    top1_agreement,
)
from mtrag_graph.measure.evaluation.golden import GoldenResponse, by_task
from mtrag_graph.measure.evaluation.runner import Scorers, score_items
from mtrag_graph.nodes.judge_candidates import judge_candidates as judge_candidates_node
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.text import declines

SPLITS = ("report", "tune", "all")
CANDIDATE_FILE = "candidate_judge.jsonl"

# (label, key in GoldenResponse.official); the stored rb_llm, rl_f and rb_agg are conditioned values
OFFICIAL_ROWS = (
    ("official rl_f", "rl_f"),
    ("official rb_llm", "rb_llm"),
    ("official rb_agg", "rb_agg"),
    ("official Bert-KPrec", "Bert-KPrec"),
    ("official Bert-Rec", "Bert-Rec"),
    ("official RougeL", "RougeL"),
)
# (label, where in a harness row, key); conditioned like the official values they sit beside
HARNESS_ROWS = (
    ("RL_F^c", "conditioned", "rl_f"),
    ("RB_llm^c", "conditioned", "rb_llm"),
    ("RB_alg^c", "conditioned", "rb_alg"),
    ("Bert-K-Prec", "scores", "bert_kprec"),
    ("Bert-Rec", "scores", "bert_rec"),
    ("ROUGE-L", "scores", "rouge_l"),
    ("faithfulness (answer judge)", "scores", "faithfulness"),
    ("cited sentences (citations)", "scores", "cited_share"),
    ("citation precision (citations)", "scores", "citation_precision"),
)


@dataclass(frozen=True)
class CandidateJudge:
    """How a candidate judge scores the responses of one task: ``score(responses) -> (scores, details)``."""

    name: str
    score: Callable[[list[GoldenResponse]], tuple[list[float], dict[str, Any]]]


def judge_candidates(
    groups: dict[str, list[GoldenResponse]], judge: CandidateJudge, out_dir: Path, progress: bool = True
) -> dict[str, dict[str, Any]]:
    """One row per task: the judge's score of each response (by key), its pick, its seconds; resumable."""
    writer, done = open_resumable(out_dir / CANDIDATE_FILE, _row_key)
    rows: dict[str, dict[str, Any]] = {}
    with writer:
        for task_id, group in tqdm(groups.items(), desc="candidate judge", unit="task", disable=not progress):
            stored = done.get(f"{judge.name}|{task_id}")
            if stored is not None:
                rows[task_id] = {**stored, "reused": True}
                continue
            started = time.perf_counter()
            scores, details = judge.score(group)
            seconds = time.perf_counter() - started
            best = max(range(len(scores)), key=lambda i: (scores[i], -i))
            row = {
                "judge": judge.name,
                "task_id": task_id,
                "scores": {r.key: s for r, s in zip(group, scores, strict=True)},
                "chosen": group[best].key,
                "seconds": round(seconds, 4),
                "details": details,
            }
            writer.write(row)
            rows[task_id] = row
    return rows


def _row_key(row: dict[str, Any]) -> str | None:
    if isinstance(row.get("judge"), str) and isinstance(row.get("task_id"), str):
        return f"{row['judge']}|{row['task_id']}"
    return None


def _agreement(
    values: dict[str, float | None], responses: Sequence[GoldenResponse]
) -> dict[str, float | int | None]:
    metric = [values.get(r.key) for r in responses]
    rho_f, n = spearman(metric, [r.human["faithfulness"] for r in responses])
    rho_c, _ = spearman(metric, [r.human["completeness"] for r in responses])
    groups = [
        [(values.get(r.key), r.human["win-rate"]) for r in g] for g in by_task(list(responses)).values()
    ]
    pairwise, pairs = pairwise_agreement(groups)
    top1, tasks = top1_agreement(groups)
    return {
        "rho_faithfulness": rho_f,
        "rho_completeness": rho_c,
        "pairwise": pairwise,
        "top1": top1,
        "responses": n,
        "pairs": pairs,
        "tasks": tasks,
    }


def _split(responses: Sequence[GoldenResponse], split: str) -> list[GoldenResponse]:
    return list(responses) if split == "all" else [r for r in responses if r.split == split]


def idk_verdicts(harness: dict[str, dict[str, Any]], responses: Sequence[GoldenResponse]) -> dict[str, dict]:
    """IDK verdicts per method (1 = declines): the harness's (as configured) and the refusal pattern alone."""
    methods: dict[str, dict[str, int | None]] = {"pattern (text.declines)": {}}
    for r in responses:
        methods["pattern (text.declines)"][r.key] = int(declines(r.item.response))
        row = harness.get(r.key)
        # a harness run with the pattern method repeats the first row: not shown twice
        if row is not None and "idk" in row["scores"] and row.get("idk_method") != "pattern":
            label = f"harness idk ({row.get('idk_method') or 'judge'})"
            value = row["scores"]["idk"]
            methods.setdefault(label, {})[r.key] = None if value is None else int(value == 1)
    return methods


def build_fidelity(
    responses: Sequence[GoldenResponse],
    harness: dict[str, dict[str, Any]],
    candidates: dict[str, dict[str, dict[str, Any]]],
    config: dict[str, Any],
) -> dict[str, Any]:
    """Every table of the fidelity report (see the module docstring)."""
    metrics: dict[str, dict[str, float | None]] = {}
    for label, key in OFFICIAL_ROWS:
        metrics[label] = {r.key: r.official[key] for r in responses}
    metrics["response length (chars)"] = {r.key: float(len(r.item.response)) for r in responses}
    for label, where, key in HARNESS_ROWS:
        values = {r.key: harness[r.key][where].get(key) for r in responses if r.key in harness}
        if any(v is not None for v in values.values()):
            metrics[label] = values
    for name, rows in candidates.items():
        metrics[f"candidate judge: {name}"] = {
            k: v for row in rows.values() for k, v in row["scores"].items()
        }
    tables = {
        split: {label: _agreement(values, _split(responses, split)) for label, values in metrics.items()}
        for split in SPLITS
    }
    idk: dict[str, dict[str, Any]] = {}
    for method, verdicts in idk_verdicts(harness, responses).items():
        idk[method] = {}
        for split in SPLITS:
            pairs = [
                (verdicts[r.key], r.official_idk)
                for r in _split(responses, split)
                if verdicts.get(r.key) is not None
            ]
            predicted, actual = [p for p, _ in pairs], [a for _, a in pairs]
            idk[method][split] = {
                "n": len(pairs),
                "positives": sum(actual),
                "accuracy": accuracy(predicted, actual),
                "kappa": cohen_kappa(predicted, actual),
            }
    seconds: dict[str, list[float]] = {}
    for row in harness.values():
        if not row.get("reused"):
            for name, value in row.get("seconds", {}).items():
                seconds.setdefault(name, []).append(value)
    cost = {f"{k} (per response)": sum(v) / len(v) for k, v in seconds.items()}
    for name, rows in candidates.items():
        fresh = [row["seconds"] for row in rows.values() if not row.get("reused") and "seconds" in row]
        if fresh:
            cost[f"candidate judge: {name} (per task)"] = sum(fresh) / len(fresh)
    return {
        "config": config,
        "responses": len(responses),
        "tasks": len(by_task(list(responses))),
        "split_sizes": {s: len(by_task(_split(responses, s))) for s in SPLITS},
        "agreement": tables,
        "idk": idk,
        "seconds": cost,
    }


def _fmt(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def render_fidelity(report: dict[str, Any]) -> str:
    config = report["config"]
    lines = [
        f"# Judge fidelity on {config.get('golden', 'the golden file')}",
        "",
        f"- responses: {report['responses']} ({report['tasks']} tasks); split by conversation (sha256 of the conversation id): "
        + ", ".join(f"{s} {n} tasks" for s, n in report["split_sizes"].items()),
        f"- harness metrics: {', '.join(config.get('metrics', []))}; judge: {config.get('judge') or 'none'}; "
        f"BERTScore encoder: {config.get('encoder') or 'none'}; IDK method: {config.get('idk_method')}",
        "- rho: Spearman over responses vs mean human faithfulness / completeness; pairwise: same-task pairs "
        "with different human win-rates ordered as people did (metric ties left out); top-1: the metric's "
        "best of a task (first on a tie) is a human favourite. Official rb_llm / rl_f / rb_agg and the "
        "harness's ^c values are conditioned on answerability.",
        "",
    ]
    for split in SPLITS:
        lines += [
            f"## Agreement with people: {split} half"
            if split != "all"
            else "## Agreement with people: whole file",
            "",
            "| metric | rho faithfulness | rho completeness | pairwise (win-rate) | top-1 | responses | pairs |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, row in report["agreement"][split].items():
            lines.append(
                f"| {label} | {_fmt(row['rho_faithfulness'])} | {_fmt(row['rho_completeness'])} | "
                f"{_fmt(row['pairwise'])} | {_fmt(row['top1'])} | {row['responses']} | {row['pairs']} |"
            )
        lines.append("")
    lines += [
        "## IDK verdicts vs the official conditional_idk",
        "",
        "| method | split | n | official IDK | accuracy | Cohen's kappa |",
        "|---|---|---|---|---|---|",
    ]
    for method, splits in report["idk"].items():
        for split, row in splits.items():
            lines.append(
                f"| {method} | {split} | {row['n']} | {row['positives']} | {_fmt(row['accuracy'], 3)} | "
                f"{_fmt(row['kappa'], 3)} |"
            )
    lines.append("")
    if report["seconds"]:
        lines += ["## Cost (seconds, rows computed in this run)", "", "| what | seconds |", "|---|---|"]
        lines += [f"| {k} | {v:.3f} |" for k, v in report["seconds"].items()]
        lines.append("")
    return "\n".join(lines)


def run_fidelity(
    responses: Sequence[GoldenResponse],
    scorers: Scorers,
    judges: Sequence[CandidateJudge],
    out_dir: Path,
    config: dict[str, Any],
    progress: bool = True,
) -> tuple[dict[str, Any], list[Path]]:
    """Score, compare with people, write ``fidelity.json`` and ``fidelity.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    harness: dict[str, dict[str, Any]] = {}
    if scorers.metrics:
        rows = score_items([r.item for r in responses], scorers, out_dir / "harness", progress=progress)
        harness = {row["task_id"]: row for row in rows}
    groups = by_task(list(responses))
    candidates = {judge.name: judge_candidates(groups, judge, out_dir, progress) for judge in judges}
    report = build_fidelity(responses, harness, candidates, config)
    paths = [out_dir / "fidelity.json", out_dir / "fidelity.md"]
    paths[0].write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    paths[1].write_text(render_fidelity(report), encoding="utf-8")
    return report, paths


def graph_node_candidates(context) -> CandidateJudge:
    """The graph's ``judge_candidates`` node itself, run on the three responses as if they were candidates
    (gate "yes" when the task has passages); a judge failure gives the node's prior-order fallback."""
    runtime = SimpleNamespace(context=context)
    if context.judge_method == "answer":
        name = answer_judge_of(context.answer_judge).name
    else:
        name = f"llm judge ({context.judge_model})"

    def score(group: list[GoldenResponse]) -> tuple[list[float], dict[str, Any]]:
        item = group[0].item
        state = {
            "task_id": item.task_id.rsplit("/", 1)[0],
            "question": item.question,
            "selected_history": [{"speaker": s, "text": t} for s, t in item.history],
            "kept_passages": [{"document_id": f"p{i}", "text": p} for i, p in enumerate(item.passages)],
            "gate": "yes" if item.passages else "no",
            "candidate_answers": [
                {"index": i, "name": r.model_id, "text": r.item.response} for i, r in enumerate(group)
            ],
        }
        judgement = judge_candidates_node(state, runtime)["judgement"]
        by_index = {s["index"]: s.get("score") for s in judgement.get("scores", [])}
        if any(v is None for v in by_index.values()) or len(by_index) != len(group):
            # the node fell back to its prior order: the chosen candidate first, the others tied below
            by_index = {i: float(i == judgement["chosen"]) for i in range(len(group))}
        return [by_index[i] for i in range(len(group))], {
            "judge": judgement.get("judge"),
            "reason": judgement.get("reason"),
        }

    return CandidateJudge(name=name, score=score)
