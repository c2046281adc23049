"""How much evidence the answering prompt needs on real documents: key facts kept per budget, no model call.

``research/evidence_budget.py`` chose the evidence budget on MTRAG (the share of a reference answer's
words the excerpts keep). This asks the question a real-documents answer depends on: for each answerable
turn of a real-documents run whose kept passages hold every key fact, do the excerpts the answering prompt
would see (``prompts.excerpts``, the run's own standalone question and kept passages) still hold them,
budget by budget? Beside it, the prompt tokens of the excerpts: estimated (``evidence.estimate_tokens``,
what the budget counts) and, where the bundled 1.5B model is installed, counted by its tokenizer.

    python -m research.evidence_keyfacts runs/real-documents-tuning [--budgets 200,300,400,600,800]

The run is what ``python -m benchmarks.real_documents --split tuning`` wrote (any budget: the kept
passages come whole in ``contexts``). Tune on the tuning split's run only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import facts_found
from mtrag_graph.models import get_embedder
from mtrag_graph.prompts.excerpts import DEFAULT_OPTIONS, Options, estimate_tokens, excerpts, score_sentences

BUDGETS = (200, 300, 400, 500, 600, 800)


def _tokenizer() -> Callable[[str], int] | None:
    """The 1.5B model's tokenizer (its vocabulary only), or None when llama.cpp or the model is missing."""
    try:
        from llama_cpp import Llama

        from mtrag_graph.models.bundled import gguf_path

        llm = Llama(str(gguf_path("qwen2.5-coder-1.5b")), vocab_only=True, verbose=False)
    except Exception:  # noqa: BLE001 - a measurement without the real count is still a measurement
        return None
    return lambda text: len(llm.tokenize(text.encode("utf-8"), add_bos=False))


def cases(run: Path) -> list[dict[str, Any]]:
    """Answerable turns of the run whose kept passages hold every key fact: question, passages, facts."""
    questions = load_set()
    found = []
    for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("status") != "ok":
            continue
        _, _, turn = turn_of(questions, record["task_id"])
        passages = record.get("contexts") or []
        if not turn.answerable or not passages:
            continue
        whole = "\n".join(str(p.get("text") or "") for p in passages)
        if facts_found(whole, turn.key_facts) < len(turn.key_facts):
            continue
        route = record.get("route") or {}
        question = (
            route.get("standalone_question") or route.get("global_rewrite") or record["input"][-1]["text"]
        )
        found.append({"task_id": record["task_id"], "question": question, "passages": passages,
                      "facts": turn.key_facts})  # fmt: skip
    return found


def measure(
    found: Sequence[dict[str, Any]],
    budgets: Sequence[int],
    embed: Any,
    count: Callable[[str], int] | None,
    options: Options = DEFAULT_OPTIONS,
) -> dict[str, dict[str, Any]]:
    scored = [(case, score_sentences(case["question"], case["passages"], embed)) for case in found]
    rows: dict[str, dict[str, Any]] = {}
    for budget in (*budgets, 0):
        kept, estimated, counted, missed = 0, [], [], []
        for case, sentences in scored:
            texts = [str(p.get("text") or "") for p in case["passages"]]
            shown = excerpts(texts, sentences, budget, options) if budget else texts
            joined = "\n".join(shown)
            if facts_found(joined, case["facts"]) == len(case["facts"]):
                kept += 1
            else:
                missed.append(case["task_id"])
            estimated.append(sum(estimate_tokens(t) for t in shown))
            if count is not None:
                counted.append(sum(count(t) for t in shown if t))
        rows[str(budget or "whole")] = {
            "kept": kept,
            "cases": len(scored),
            "estimated_tokens_mean": round(statistics.mean(estimated), 1) if estimated else 0.0,
            "tokens_mean": round(statistics.mean(counted), 1) if counted else None,
            "missed": missed,
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a real-documents run folder (predictions.jsonl)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--lexical", action="store_true", help="score sentences without the embedder")
    parser.add_argument(
        "--neighbour-weight", type=float, default=0.0, help="Options.neighbour_weight (0: the default)"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the rows as JSON")
    args = parser.parse_args(argv)
    found = cases(args.run)
    if not found:
        print(
            f"error: {args.run}: no answerable turn whose kept passages hold its key facts", file=sys.stderr
        )
        return 2
    embed = None if args.lexical else get_embedder("minilm").embed
    rows = measure(
        found, [int(b) for b in args.budgets.split(",")], embed, _tokenizer(),
        Options(neighbour_weight=args.neighbour_weight),
    )  # fmt: skip
    print(f"{len(found)} answerable turns of {args.run} whose kept passages hold every key fact")
    print("| budget | key facts kept | estimated tokens | tokens (1.5B tokenizer) |")
    print("|---|---|---|---|")
    for budget, row in rows.items():
        share = row["kept"] / row["cases"]
        print(f"| {budget} | {row['kept']}/{row['cases']} ({share:.0%}) | {row['estimated_tokens_mean']:.0f} | "
              f"{row['tokens_mean'] if row['tokens_mean'] is not None else '-'} |")  # fmt: skip
    if args.output:
        args.output.write_text(
            json.dumps({"run": str(args.run), "rows": rows}, indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
