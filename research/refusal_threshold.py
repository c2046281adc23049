"""Choose the refusal detector's REMARK_WORDS on the tuning half of the golden file (by conversation).

    python -m research.refusal_threshold ../shared/data/mtrag/eval/reference_subset_with_human_evaluations.json

A response that opens with a refusal declines when at most REMARK_WORDS words follow it (else it
is "partial": a refusal with a real answer after it). For each candidate value this prints the
accuracy and Cohen's kappa of ``text.declines`` against the official IDK verdict on the tuning
half only, and the range of values that reach the best kappa (the report half is never read).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from unittest import mock

from mtrag_graph.measure.evaluation.agreement import accuracy, cohen_kappa
from mtrag_graph.measure.evaluation.golden import GoldenResponse, load_golden

# the module, whose REMARK_WORDS the scan patches
declines = importlib.import_module("mtrag_graph.text")

CANDIDATES = (5, 10, 15, 20, 25, 30, 40, 60)


def scan(
    responses: list[GoldenResponse], candidates=CANDIDATES
) -> dict[int, tuple[float | None, float | None]]:
    """``{remark_words: (accuracy, kappa)}`` of the detector against the official IDK verdicts."""
    actual = [r.official_idk for r in responses]
    result = {}
    for value in candidates:
        with mock.patch.object(declines, "REMARK_WORDS", value):
            predicted = [int(declines.declines(r.item.response)) for r in responses]
        result[value] = (accuracy(predicted, actual), cohen_kappa(predicted, actual))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("golden")
    args = parser.parse_args()
    tune = [r for r in load_golden(args.golden) if r.split == "tune"]
    print(f"tuning half: {len(tune)} responses, {sum(r.official_idk for r in tune)} official IDK")
    table = scan(tune)
    for value, (acc, kappa) in table.items():
        mark = " (shipped)" if value == declines.REMARK_WORDS else ""
        print(f"REMARK_WORDS {value:3d}: accuracy {acc:.3f} kappa {kappa:.3f}{mark}")
    best = max(k for _, k in table.values() if k is not None)
    print("best kappa", f"{best:.3f}", "at", [v for v, (_, k) in table.items() if k == best])
    return 0


if __name__ == "__main__":
    sys.exit(main())
