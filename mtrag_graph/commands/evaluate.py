"""``mtrag-graph evaluate``: the benchmark's generation metrics over a predictions file, or a comparison."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mtrag_graph import settings

DEFAULT_JUDGE = settings.LARGE_MODEL
DEFAULT_METRICS = "rouge,bert,rb_llm,rl_f,idk,clarify,faithfulness"
# --fidelity: the metrics that need no LLM call (the LLM judges are slow on a CPU: ask for them by name)
FIDELITY_METRICS = "rouge,bert,idk,faithfulness,citations"
FIDELITY_CANDIDATE_JUDGES = ("answer", "llm")

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    from mtrag_graph.commands._options import at_least_one

    parser = subparsers.add_parser(
        "evaluate",
        help="score predictions with the MTRAG generation metrics (ROUGE-L, BERTScore, RB_llm, RL_F, HM3)",
        description="Score a predictions file (submission format: each task plus predictions[0].text), "
        "or compare several with --compare. Per-task scores go to REPORT_DIR/scores.jsonl (resumable), "
        "then report.json, report.md and a PNG chart.",
    )
    parser.add_argument("predictions", nargs="?", help="predictions JSONL (submission format)")
    parser.add_argument(
        "--fidelity",
        metavar="GOLDEN",
        help="judge fidelity: score the responses of the golden file with human ratings "
        "(eval/reference_subset_with_human_evaluations.json) and write how well each metric and the "
        "candidate judge agree with people (fidelity.md / fidelity.json)",
    )
    parser.add_argument(
        "--candidate-judges",
        default="answer",
        help="with --fidelity: the graph's judge_candidates node, run on each golden task's three responses, "
        "with 'answer' (the fitted answer judge, no LLM call; the default) and/or 'llm' (the --judge model's "
        "verdicts), or 'none'",
    )
    parser.add_argument("--tasks", help="tasks JSONL supplying targets / answerability, joined by task_id")
    parser.add_argument("-o", "--output", required=True, help="report directory")
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help=f"judge model spec (default {DEFAULT_JUDGE})")
    parser.add_argument(
        "--metrics",
        help=f"comma list or 'all' (default {DEFAULT_METRICS}; with --fidelity {FIDELITY_METRICS})",
    )
    parser.add_argument(
        "--idk-method",
        choices=("pattern", "judge", "pattern+judge"),
        default="pattern",
        help="IDK verdict: the refusal detector (default, no model call), the LLM judge, or the detector "
        "with the judge deciding what the detector calls partial",
    )
    parser.add_argument(
        "--answer-judge", help="answer judge model file (default: the shipped mtrag_graph/judging/data one)"
    )
    parser.add_argument(
        "--no-embedding-cache",
        action="store_true",
        help="do not keep the answer judge's sentence vectors on disk (timings then include embedding, "
        "as in the graph)",
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
    parser.add_argument(
        "--ratings",
        choices=("llm", "fitted"),
        default="llm",
        help="who gives RB_llm and RL_F: the --judge model (default), or the fitted models of "
        "mtrag_graph/measure/evaluation/fitted.py (no model call: RL_F = the answer judge's faithfulness, RB_llm = "
        "a rating from BERTScore recall and faithfulness fitted on the official rb_llm of the golden "
        "file's tuning half; see benchmarks/results/judges.md, 'What is fitted')",
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
    from mtrag_graph.measure.evaluation.runner import FITTED_NEEDS, JUDGE_METRICS, Scorers, with_fitted_needs

    fitted = args.ratings == "fitted"
    if fitted:
        metrics = with_fitted_needs(metrics)
    bert = judge = None
    if "bert" in metrics:
        from mtrag_graph.measure.evaluation.bertscore import Baseline, BertScorer

        layer = args.bert_layer
        baseline = None
        if args.bert_baseline:
            if layer is None:
                raise ValueError(
                    "--bert-baseline needs --bert-layer (the baseline file holds one row per layer)"
                )
            baseline = Baseline.from_file(args.bert_baseline, layer)
        bert = BertScorer(args.bert_encoder, layer=layer, baseline=baseline)
    wanted = JUDGE_METRICS & set(metrics) - (set(FITTED_NEEDS) if fitted else set())
    if wanted - {"idk"} or ("idk" in wanted and args.idk_method != "pattern"):
        from mtrag_graph.measure.evaluation.judges import (
            Judge,
            JudgeSettings,
            VerdictCache,
            default_cache_path,
        )

        cache = None if args.no_judge_cache else VerdictCache(args.judge_cache or default_cache_path())
        judge = Judge(args.judge, cache=cache, settings=JudgeSettings(statements_from=args.rl_f_statements))
    answer_judge = None
    if "faithfulness" in metrics:
        from mtrag_graph.judging import load_answer_judge
        from mtrag_graph.judging.embedding_cache import default_embedding_cache

        # vectors kept on disk: scoring the same passages again (another report, --fidelity) is fast
        cache = None if args.no_embedding_cache else default_embedding_cache()
        answer_judge = load_answer_judge(args.answer_judge, embedding_cache=cache)
    # with ratings="fitted", Scorers loads the shipped reference rating itself
    return Scorers(
        metrics=metrics,
        bert=bert,
        judge=judge,
        answer_judge=answer_judge,
        idk_method=args.idk_method,
        ratings=args.ratings,
    )


def _evaluate_one(predictions: str, args, scorers, out_dir: Path):
    from mtrag_graph.measure.evaluation.compare import judge_picks
    from mtrag_graph.measure.evaluation.inputs import load_items
    from mtrag_graph.measure.evaluation.report import build_report, write_report
    from mtrag_graph.measure.evaluation.runner import score_items

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
        "answer_judge": scorers.provenance["answer_judge"],
        "idk_method": scorers.provenance["idk_method"],
        "ratings": scorers.provenance["ratings"],
        "judge_picks": judge_picks(predictions),
    }
    if scorers.judge:
        config["judge_settings"] = vars(scorers.judge.settings)
    report = build_report(rows, config, [str(i) for i in issues])
    paths = write_report(report, out_dir)
    return report, {row["task_id"]: row for row in rows}, paths


def run(args: argparse.Namespace) -> int:
    from mtrag_graph.measure.evaluation.runner import parse_metrics

    try:
        metrics = parse_metrics(args.metrics or (FIDELITY_METRICS if args.fidelity else DEFAULT_METRICS))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.fidelity:
        return _run_fidelity(args, metrics)
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
        from mtrag_graph.measure.evaluation.compare import compare, render_comparison

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


def _run_fidelity(args: argparse.Namespace, metrics: tuple[str, ...]) -> int:
    from mtrag_graph.context import Context
    from mtrag_graph.measure.evaluation.fidelity import graph_node_candidates, run_fidelity
    from mtrag_graph.measure.evaluation.golden import by_task, load_golden
    from mtrag_graph.tasks import TaskError

    names = [n.strip() for n in args.candidate_judges.split(",") if n.strip() and n.strip() != "none"]
    unknown = set(names) - set(FIDELITY_CANDIDATE_JUDGES)
    if unknown:
        print(
            f"error: unknown candidate judges {sorted(unknown)}: use {', '.join(FIDELITY_CANDIDATE_JUDGES)}",
            file=sys.stderr,
        )
        return 2
    if not Path(args.fidelity).is_file():
        print(f"error: no such file: {args.fidelity}", file=sys.stderr)
        return 2
    try:
        responses = load_golden(args.fidelity)
        if args.limit:
            keep = set(list(by_task(responses))[: args.limit])
            responses = [r for r in responses if r.task_id in keep]
        scorers = _scorers(args, metrics)
        judges = []
        if "answer" in names:
            from mtrag_graph.judging import load_answer_judge
            from mtrag_graph.judging.embedding_cache import default_embedding_cache

            cache = None if args.no_embedding_cache else default_embedding_cache()
            judge = load_answer_judge(args.answer_judge, embedding_cache=cache)
            judges.append(graph_node_candidates(Context(judge_method="answer", answer_judge=judge)))
        if "llm" in names:
            judges.append(graph_node_candidates(Context(judge_method="llm", judge_model=args.judge)))
        config = {
            "golden": str(args.fidelity),
            "limit_tasks": args.limit,
            "metrics": list(scorers.metrics),
            "judge": scorers.provenance["judge"],
            "encoder": scorers.provenance["encoder"],
            "answer_judge": scorers.provenance["answer_judge"],
            "idk_method": scorers.provenance["idk_method"],
            "candidate_judges": [j.name for j in judges],
        }
        _, paths = run_fidelity(responses, scorers, judges, Path(args.output), config, not args.no_progress)
    except (ValueError, TaskError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(str(p) for p in paths))
    return 0
