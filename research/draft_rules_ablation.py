"""Run a command of the project with some of the draft check's detectors switched off (no product switch).

The draft check (``judging.verdict.check_draft``) asks a draft again, then declines it, when a detector
finds a problem. Each detector was chosen on one or two answers; this replays a run without some of them,
so what each one changes is measured on data it was not chosen on. With the reply cache
(``MTRAG_LLM_CACHE``) shared with the run it is compared against, only the tasks where a switched-off
detector fired cost model calls.

    python -m research.draft_rules_ablation --off repeats_values,repeats_answer -- \\
        mtrag_graph answer TASKS -o runs/OUT.jsonl
    python -m research.draft_rules_ablation --off all -- benchmarks.real_documents --split fresh -o runs/rd-X \\
        --results runs/rd-X/results.md   # not the tracked benchmarks/results/documents.md

Detectors (``--off``, comma-separated, or ``all``): ``repeats_values`` (a follow-up giving the answer
before's values again), ``repeats_fragment`` (an elliptic turn answered with the question before's
answer), ``repeats_answer`` (80% of the answer before's words), ``restates`` (the answer restates the
question), ``lead_restates`` (its first sentence does), ``no_quantity`` (no number for "how many"),
``opens_unnamed`` ("This ..." for something never named), ``echoes`` (the prompt's words given back),
``injection`` (an instruction found in a passage repeated).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import runpy
import sys
from collections.abc import Callable
from typing import Any


def _never(*_args: Any, **_kwargs: Any) -> bool:
    return False


# detector -> (module, attribute, replacement): where check_draft or answer_problems looks it up
DETECTORS: dict[str, tuple[str, str, Any]] = {
    "repeats_values": ("mtrag_graph.judging.verdict", "repeats_values", _never),
    "repeats_fragment": ("mtrag_graph.judging.verdict", "answers_replaced", _never),
    "repeats_answer": ("mtrag_graph.text.answers", "repeats_answer", _never),
    "restates": ("mtrag_graph.text.answers", "RESTATEMENT_OVERLAP", 2.0),  # an overlap share never reaches 2
    "lead_restates": ("mtrag_graph.text.answers", "lead_restates", _never),
    "no_quantity": ("mtrag_graph.text.answers", "asks_quantity", _never),
    "opens_unnamed": ("mtrag_graph.text.answers", "opens_unnamed", _never),
    "echoes": ("mtrag_graph.judging.verdict", "echoes_instruction", _never),
    "injection": ("mtrag_graph.judging.verdict", "repeats_injection", _never),
}


def switch_off(names: list[str]) -> list[Callable[[], None]]:
    """Replace each named detector; returns the undo of each (tests put them back)."""
    undo: list[Callable[[], None]] = []
    for name in names:
        if name not in DETECTORS:
            raise SystemExit(
                f"draft_rules_ablation: unknown detector '{name}': use {', '.join(DETECTORS)} or all"
            )
        module_name, attribute, replacement = DETECTORS[name]
        module = importlib.import_module(module_name)
        if not hasattr(module, attribute):
            raise SystemExit(f"draft_rules_ablation: {module_name} has no {attribute} (the code moved)")
        original = getattr(module, attribute)
        setattr(module, attribute, replacement)
        undo.append(functools.partial(setattr, module, attribute, original))
    return undo


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        print(
            "draft_rules_ablation: give the command after '--' (a module and its arguments)", file=sys.stderr
        )
        return 2
    at = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--off", required=True, help="detectors to switch off, comma-separated, or 'all'")
    args = parser.parse_args(argv[:at])
    command = argv[at + 1 :]
    if not command:
        print("draft_rules_ablation: no command after '--'", file=sys.stderr)
        return 2
    names = list(DETECTORS) if args.off == "all" else [n.strip() for n in args.off.split(",") if n.strip()]
    switch_off(names)
    print(f"draft_rules_ablation: off: {', '.join(names)}", file=sys.stderr)
    module, *rest = command
    if module == "mtrag_graph":  # the console script mtrag-graph
        from mtrag_graph.cli import main as cli_main

        return cli_main(rest)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
