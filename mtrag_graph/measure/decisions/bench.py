"""The decision benchmark: build each labelled set, run the decision over it, score, write table + JSON.

Output folder layout:

- ``sets/<split>-<decision>.jsonl``: the labelled items (the retrieved passages of UNANSWERABLE turns
  are stored here, so a re-run needs no index);
- ``results/<decision>-<split>-<fingerprint>.jsonl``: one result per item (the resumable cache);
- ``<split>-<label>.json`` and ``.md``: the scores and their tables.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.measure.decisions import metrics, report, sets
from mtrag_graph.measure.decisions.retrieval import index_retriever
from mtrag_graph.measure.decisions.run import decide_gate, fingerprint, run_decision

SCORERS: dict[str, Callable[[Sequence[dict[str, Any]]], dict[str, Any]]] = {
    "gate": metrics.gate_report,
    "evidence": metrics.evidence_scores,
    "clarify": metrics.clarify_scores,
    "relation": metrics.relation_scores,
}


# called after each decision with (name, items, results, set file); its dict goes into the report
AfterDecision = Callable[[str, list[dict[str, Any]], list[dict[str, Any]], Path], dict[str, Any] | None]
SET_OF = {"evidence": "gate"}  # the evidence features are computed on the gate's set


def build_set(
    name: str,
    tasks: list[dict[str, Any]],
    *,
    index_dir: str | None,
    limit_per_kind: int | None,
    seed: int,
) -> list[dict[str, Any]]:
    if name in ("gate", "evidence"):
        retriever = None
        if any(sets.answerability_of(t) == "UNANSWERABLE" for t in tasks):
            if not index_dir:
                raise ValueError(
                    "the gate set needs an index of corpora/mini for its UNANSWERABLE turns: pass --index "
                    "(build it with `mtrag-graph index .../corpora/mini/*.jsonl -o DIR`)"
                )
            retriever = index_retriever(index_dir)
        return sets.gate_items(tasks, retriever, limit_per_kind=limit_per_kind, seed=seed)
    if name == "clarify":
        return sets.clarify_items(tasks, limit_per_class=limit_per_kind, seed=seed)
    if name == "relation":
        return sets.relation_items(tasks, limit_per_label=limit_per_kind, seed=seed)
    raise ValueError(f"unknown decision '{name}': use one of {', '.join(SCORERS)}")


def load_or_build_set(path: Path, build: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    tmp.replace(path)
    return items


def run_benchmark(
    *,
    data_dir: str | Path,
    split: str,
    decisions: Sequence[str],
    tasks_file: str | Path | None = None,
    context: Context,
    out_dir: Path,
    index_dir: str | None = None,
    limit_per_kind: int | None = None,
    seed: int = 0,
    label: str = "",
    after_decision: AfterDecision | None = None,
    generate: str = "after-yes",
    ask_model: bool = True,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Each decision's set, results (cached) and scores; the report as markdown (also written to
    ``out_dir``). ``after_decision(name, items, results, set_file)``: called after each decision; what it
    returns (e.g. a fitted classifier's summary, research/fit_gate.py) goes into the report."""
    tasks = sets.load_tasks(tasks_file) if tasks_file else sets.load_split(data_dir, split)
    if tasks_file:  # its sets and results must not mix with the split's
        split = f"{split}-{Path(tasks_file).stem}"
    suffix = f"-limit{limit_per_kind}-seed{seed}" if limit_per_kind else ""
    fp = fingerprint(context)
    label = label or fp
    source_name = str(tasks_file) if tasks_file else sets.SPLITS[split]
    reports: dict[str, dict[str, Any]] = {}
    fitted: dict[str, Any] | None = None
    for name in decisions:
        items = load_or_build_set(
            out_dir / "sets" / f"{split}-{SET_OF.get(name, name)}{suffix}.jsonl",
            functools.partial(
                build_set, name, tasks, index_dir=index_dir, limit_per_kind=limit_per_kind, seed=seed
            ),
        )
        variant = f"-{generate}" + ("" if ask_model else "-no-model") if name == "gate" else ""
        cache = out_dir / "results" / f"{name}-{split}-{fingerprint(context, name)}{variant}.jsonl"
        decide = (
            functools.partial(decide_gate, generate=generate, ask_model=ask_model) if name == "gate" else None
        )
        results = run_decision(name, items, context, cache, decide=decide, progress=progress)
        reports[name] = SCORERS[name](results)
        if after_decision is not None:
            set_file = out_dir / "sets" / f"{split}-{SET_OF.get(name, name)}{suffix}.jsonl"
            fitted = after_decision(name, items, results, set_file) or fitted
    header = f"# Decision benchmark: split {split} ({source_name}), run '{label}' (context {fp})" + (
        f", at most {limit_per_kind} items per kind" if limit_per_kind else ""
    )
    markdown = report.render(reports, header)
    if fitted:
        markdown += report.fitted_line(fitted)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"{split}-{label}"
    stem.with_suffix(".json").write_text(
        json.dumps(
            {"split": split, "label": label, "context": fp, "reports": reports, "fitted_gate": fitted},
            indent=2,
        ),
        encoding="utf-8",
    )
    stem.with_suffix(".md").write_text(markdown, encoding="utf-8")
    return markdown
