"""``mtrag-graph evaluate``: the benchmark's generation metrics over a predictions file, or a comparison."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

DEFAULT_JUDGE = "qwen2.5-coder-1.5b"
DEFAULT_METRICS = "rouge,bert,rb_llm,rl_f,idk,clarify"

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    from mtrag_graph.commands.answer import at_least_one

    parser = subparsers.add_parser(
        "evaluate",
        help="score predictions with the MTRAG generation metrics (ROUGE-L, BERTScore, RB_llm, RL_F, HM3)",
        description="Score a predictions file (submission format: each task plus predictions[0].text), "
        "or compare several with --compare. Per-task scores go to REPORT_DIR/scores.jsonl (resumable), "
        "then report.json, report.md and a PNG chart.",
    )
    parser.add_argument("predictions", nargs="?", help="predictions JSONL (submission format)")
    parser.add_argument("--tasks", help="tasks JSONL supplying targets / answerability, joined by task_id")
    parser.add_argument("-o", "--output", required=True, help="report directory")
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help=f"judge model spec (default {DEFAULT_JUDGE})")
    parser.add_argument(
        "--metrics", default=DEFAULT_METRICS, help=f"comma list or 'all' (default {DEFAULT_METRICS})"
    )
    parser.add_argument(
        "--bert-encoder", help="local transformers folder for BERTScore (default: bundled MiniLM)"
    )
    parser.add_argument("--bert-layer", type=int, help="encoder layer (default: the last; official: 40)")
    parser.add_argument("--bert-baseline", help="bert_score baseline file (LAYER,P,R,F rows) for rescaling")
    parser.add_argument(
        "--judge-cache", help="verdict cache file (default: <user cache>/judge-cache/verdicts.sqlite)"
    )
    parser.add_argument(
        "--no-judge-cache", action="store_true", help="do not read or write the verdict cache"
    )
    parser.add_argument(
        "--rl-f-statements",
        choices=("judge", "sentences"),
        default="judge",
        help="RL_F statements: listed by the judge (RAGAS, default) or the response's sentences (no call)",
    )
    parser.add_argument("--limit", type=int, help="score only the first N valid rows")
    parser.add_argument(
        "--compare", nargs="+", metavar="PREDICTIONS", help="compare several prediction files"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--concurrency",
        type=at_least_one,
        default=1,
        metavar="N",
        help="tasks scored at once (judge calls in flight against a remote judge; default 1)",
    )
    parser.set_defaults(func=run)


def _scorers(args, metrics):
    from mtrag_graph.evaluation.runner import JUDGE_METRICS, Scorers

    bert = judge = None
    if "bert" in metrics:
        from mtrag_graph.evaluation.bertscore import Baseline, BertScorer

        layer = args.bert_layer
        baseline = None
        if args.bert_baseline:
            if layer is None:
                raise ValueError(
                    "--bert-baseline needs --bert-layer (the baseline file holds one row per layer)"
                )
            baseline = Baseline.from_file(args.bert_baseline, layer)
        bert = BertScorer(args.bert_encoder, layer=layer, baseline=baseline)
    if JUDGE_METRICS & set(metrics):
        from mtrag_graph.evaluation.judges import Judge, JudgeSettings, VerdictCache, default_cache_path

        cache = None if args.no_judge_cache else VerdictCache(args.judge_cache or default_cache_path())
        judge = Judge(args.judge, cache=cache, settings=JudgeSettings(statements_from=args.rl_f_statements))
    return Scorers(metrics=metrics, bert=bert, judge=judge)


def _evaluate_one(predictions: str, args, scorers, out_dir: Path):
    from mtrag_graph.evaluation.inputs import load_items
    from mtrag_graph.evaluation.report import build_report, write_report
    from mtrag_graph.evaluation.runner import score_items

    items, issues = load_items(predictions, args.tasks)
    for issue in issues:
        print(f"skipped: {issue}", file=sys.stderr)
    if args.limit:
        items = items[: args.limit]
    if not items:
        raise ValueError(f"{predictions}: no valid rows to score")
    rows = score_items(items, scorers, out_dir, progress=not args.no_progress, concurrency=args.concurrency)
    config = {
        "predictions": str(predictions),
        "tasks": args.tasks,
        "metrics": list(scorers.metrics),
        "judge": scorers.provenance["judge"],
        "judge_official": bool(scorers.judge and scorers.judge.is_official),
        "encoder": scorers.provenance["encoder"],
        "encoder_official": bool(scorers.bert and scorers.bert.is_official),
    }
    if scorers.judge:
        config["judge_settings"] = vars(scorers.judge.settings)
    report = build_report(rows, config, [str(i) for i in issues])
    paths = write_report(report, out_dir)
    return report, {row["task_id"]: row for row in rows}, paths


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.evaluation.runner import parse_metrics

    try:
        metrics = parse_metrics(args.metrics)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    files = args.compare or ([args.predictions] if args.predictions else [])
    if not files:
        print("error: give a PREDICTIONS file or --compare A.jsonl B.jsonl ...", file=sys.stderr)
        return 2
    missing = [f for f in files + ([args.tasks] if args.tasks else []) if not Path(f).is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    out_dir = Path(args.output)
    try:
        scorers = _scorers(args, metrics)
        if not args.compare:
            report, _, paths = _evaluate_one(files[0], args, scorers, out_dir)
            for warning in report["warnings"]:
                print(f"warning: {warning}", file=sys.stderr)
            print("\n".join(str(p) for p in paths))
            return 0
        from mtrag_graph.evaluation.compare import compare, render_comparison

        systems = {}
        warnings: list[str] = []
        for index, path in enumerate(files):
            name = Path(path).stem if Path(path).stem not in systems else f"{Path(path).stem}-{index}"
            report, rows, _ = _evaluate_one(path, args, scorers, out_dir / name)
            systems[name] = (report, rows)
            warnings = report["warnings"]
        result = compare(systems)
        import json

        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "compare.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
        (out_dir / "compare.md").write_text(render_comparison(result, warnings), encoding="utf-8")
        print(out_dir / "compare.md")
        return 0
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
