"""Build the clarify tuning set of underspecified and answerable twins.

python -m research.clarify_twins --data $MTRAG_DATA --seed 0 [--kinds-model SPEC] -o runs/clarify-twins.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from mtrag_graph.measure.decisions.sets import load_split, split_path
from mtrag_graph.models import get_chat_model
from research.twins import build_twins, file_sha256, model_kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_twins",
        description="From tuning-split turns whose answer depends on a named entity, write an underspecified "
        "twin (the name replaced by a bare reference, the conversation that named it removed or changed) and "
        "the original as its answerable twin, in task format. Seeded: the same seed and input give the same file.",
    )
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--kinds-model",
        metavar="SPEC",
        help="also build kind twins ('the country' for Israel): this model names each entity's kind "
        "(greedy, one call per name; e.g. the large model's spec); without it, no kind twins",
    )
    args = parser.parse_args(argv)

    if not args.data:
        print("error: pass --data or set MTRAG_DATA to the benchmark data folder", file=sys.stderr)
        return 2
    source = split_path(args.data, "tuning")
    tasks = load_split(args.data, "tuning")
    kinds = None
    if args.kinds_model:
        kinds = model_kinds(tasks, get_chat_model(args.kinds_model))
    twins = build_twins(tasks, seed=args.seed, kinds=kinds)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in twins), encoding="utf-8")
    under = [t["twin"] for t in twins if t["twin"]["role"] == "underspecified"]
    summary = {
        "input": str(source),
        "input_sha256": file_sha256(source),
        "seed": args.seed,
        "pairs": len(under),
        "forms": dict(Counter(t["form"] for t in under)),
        "kinds_model": args.kinds_model,
        "kinds": kinds,
        "with_kind_word": sum(bool(t["kind"]) for t in under),
        "history": dict(Counter(t["history"] for t in under)),
        "output_sha256": file_sha256(out),
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
