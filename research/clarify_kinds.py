"""A later turn's "the <noun>" after an agent turn that named several kinds of it: generated from MTRAG's
reference conversations, and the model-free test the clarify node runs on it (signal ``kinds``,
``judging.underspecified.rival_kinds``).

    python -m research.clarify_kinds --data $MTRAG_DATA [--dev] [--examples 20]

**The generated form** (no model, no hand-picking): every turn of MTRAG's 842 reference tasks that names
one of several kinds an earlier agent turn named ("By how much did the cotton gin increase production?"
after an answer on the cotton gin and the roller gin) becomes an underspecified turn with that kind
dropped ("By how much did the gin increase production?"), beside its answerable twin, the turn as it
was; both without passages (the benchmark gives none to such turns). Only a kind after "the", "a" or
"an", or one the turn opens with ("Worker node"), is dropped: "my FICO score", "a very popular sport"
would not read as a question. Split as the clarify data splits the conversations (``research.clarify_data.conversation_split``, seed 0).

**Printed**: how often the decision without ``kinds`` (the default before it: the rules, then the
no-passage model) and with it ask the generated turns and their twins, per split; ``rival_kinds`` on
every natural reference turn (passages left out, by class); the real-documents set's answerable turns;
and with ``--dev`` the MTRAG-UN dev slice's turns without passages, by class (the report: the slice's
"the SDK" turn is the one that suggested the form).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.underspecified import is_underspecified, named_kinds, rival_kinds
from mtrag_graph.tasks import answerability_of
from mtrag_graph.text import stem

# every pair of adjacent words, overlapping: "the first sewage treatment facilities" gives "sewage treatment"
_WORD_PAIR = re.compile(r"(?=\b(?:(the|a|an)\s+)?([A-Za-z][\w-]+)\s+([A-Za-z][\w-]+?)(s|es)?\b)")


def generated_pairs(tasks: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """(underspecified, answerable) pairs of the form, one per turn at most."""
    for task in tasks:
        turns = task["input"]
        question, history = turns[-1]["text"], turns[:-1]
        if not history:
            continue
        for match in _WORD_PAIR.finditer(question):
            kind, noun = match.group(2), match.group(3)
            if len(noun) < 3 or kind.lower() in {"the", "a", "an"}:
                continue
            if not match.group(1) and question[: match.start()].strip():
                continue  # "the", "a", "an" before the kind, or the turn's first words ("Worker node")
            kinds = named_kinds(history, noun)
            if len(kinds) < 2 or stem(kind.lower()) not in {stem(k.lower()) for k in kinds}:
                continue
            start = match.start(1) if match.group(1) else match.start(2)
            end = match.end(4) if match.group(4) else match.end(3)
            dropped = f"{question[:start]}the {noun}{match.group(4) or ''}{question[end:]}"
            yield {"source": task["task_id"], "history": history, "underspecified": dropped,
                   "answerable": question, "kinds": kinds}  # fmt: skip
            break


def _asked(history: Sequence[dict[str, str]], question: str, context: Context) -> bool:
    return bool(is_underspecified(history, question, None, context)[0])


def main(argv: list[str] | None = None) -> int:
    from benchmarks.real_documents.data import load_set
    from mtrag_graph.measure.decisions.sets import load_split
    from research.clarify_data import conversation_split, document_turns

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--dev", action="store_true", help="also the MTRAG-UN dev slice (the report)")
    parser.add_argument("--examples", type=int, default=0, help="print this many generated pairs")
    args = parser.parse_args(argv)
    with_kinds = Context()
    without = replace(
        with_kinds, clarify_signals=tuple(s for s in with_kinds.clarify_signals if s != "kinds")
    )

    print("## generated: a kind dropped from a turn that named it (no passages)\n")
    print(
        "| split | pairs | underspecified asked, before / with `kinds` | answerable twins asked, before / with |"
    )
    print("|---|---|---|---|")
    shown = 0
    reference = load_split(args.data, "tuning")
    split_of = conversation_split(reference, seed=0)
    for split in ("tuning", "held-out"):
        own = [
            t
            for t in reference
            if split_of[str(t.get("conversation_id") or t["task_id"].split("<::>")[0])] == split
        ]
        pairs = list(generated_pairs(own))
        counts: Counter[tuple[str, str]] = Counter()
        for pair in pairs:
            for form in ("underspecified", "answerable"):
                for name, context in (("before", without), ("with", with_kinds)):
                    counts[form, name] += _asked(pair["history"], pair[form], context)
            if shown < args.examples:
                shown += 1
                asks = rival_kinds(pair["history"], pair["underspecified"]) is not None
                print(f"<!-- {pair['underspecified'][:100]} | kinds {'asks' if asks else 'silent'} -->")
        n = len(pairs)
        print(f"| {split} | {n} | {counts['underspecified', 'before']}/{n} / {counts['underspecified', 'with']}/{n} | "
              f"{counts['answerable', 'before']}/{n} / {counts['answerable', 'with']}/{n} |")  # fmt: skip

    print("\n## natural turns, passages left out: `rival_kinds` fires on\n")
    print("| turns | class | fires | of |\n|---|---|---|---|")
    natural: Counter[str] = Counter()
    fired: Counter[str] = Counter()
    examples: list[str] = []
    for task in reference:
        label = str(answerability_of(task))
        natural[label] += 1
        found = rival_kinds(task["input"][:-1], task["input"][-1]["text"])
        if found is not None:
            fired[label] += 1
            examples.append(f"{label}: {task['input'][-1]['text'][:90]}")
    for label in sorted(natural):
        print(f"| MTRAG reference | {label} | {fired[label]} | {natural[label]} |")
    documents = [t for t in document_turns(load_set().conversations) if answerability_of(t) == "ANSWERABLE"]
    real = len(documents)
    real_fired = sum(rival_kinds(t["input"][:-1], t["input"][-1]["text"]) is not None for t in documents)
    print(f"| real documents (all splits) | answerable | {real_fired} | {real} |")
    for example in examples[:10]:
        print(f"<!-- fires: {example} -->")

    if args.dev:
        print("\n## MTRAG-UN dev, turns without passages (the report)\n")
        print("| class | turns | asked before `kinds` | asked with |\n|---|---|---|---|")
        rows: Counter[tuple[str, str]] = Counter()
        for task in load_split(args.data, "report"):
            if task.get("contexts"):
                continue
            label = str(answerability_of(task))
            history, question = task["input"][:-1], task["input"][-1]["text"]
            rows[label, "n"] += 1
            rows[label, "before"] += _asked(history, question, without)
            rows[label, "with"] += _asked(history, question, with_kinds)
        for label in sorted({label for label, _ in rows}):
            print(f"| {label} | {rows[label, 'n']} | {rows[label, 'before']} | {rows[label, 'with']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
