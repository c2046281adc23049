"""Which options a clarifying question may name: each option's cosine with the user's turn, on the
MTRAG-UN tuning slice, and the threshold ``judging.clarify_options.OPTION_MIN_SIMILARITY`` chosen there.

    python -m research.clarify_options --data $MTRAG_DATA [--embedder minilm] [--show]

**Options**: what the clarify node would offer on each turn of ``tasks/mtragun_tuning.jsonl`` (reference
passages; ``nodes.clarify.question_options``: kinds an earlier answer named when the turn has no passages,
else names of the reference's kind in the passages, else their titles), for every turn where it finds two
or more, whatever the decision. **Own**: the options of an UNDERSPECIFIED turn beside that turn: the
readings the benchmark's underspecified turns leave open, mostly about what the user asked. **Foreign**:
the same options beside the UNDERSPECIFIED turns of the other conversations: options about something
else, as kinds of "key" from an answer on encryption are beside a question on a prime minister's "key
aspects". No model call but the embedder's: every option and turn is embedded once.

**Printed**: for each text an option is compared with (the user's question alone; the question after
the conversation's last user turn) and each form of the option (alone; in the sentence of the passage or
answer it comes from), the AUC of own against foreign options, and by threshold the share of own options
kept, of own option sets still offering two, and of foreign options kept; ``--show`` lists every own
option with its cosines. The threshold chosen: the highest one that keeps 90% of own options (a
clarifying question that names the readings is the point; a foreign option it keeps is one the user
can refuse).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TUNING = "tasks/mtragun_tuning.jsonl"
THRESHOLDS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
OWN_KEPT = 0.9  # the share of own options the chosen threshold keeps


def option_sets(tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The options the clarify node would offer on each task with two or more: task id, label,
    conversation, question, kind, options and each option's sentence (where it was found)."""
    from mtrag_graph.context import Context
    from mtrag_graph.nodes.clarify import question_options
    from mtrag_graph.tasks import parse_task

    context = Context()
    rows = []
    for raw in tasks:
        task = parse_task(raw)
        history = [t.model_dump() for t in task.history]
        passages = [dict(p) for p in task.passages or []] or None
        offered = question_options(history, task.question, passages, context)
        if offered is None:
            continue
        kind, options = offered
        # the passages' sentences and the answers' first, a title (the option itself, often) last
        sources = [str(p.get("text") or "") for p in passages or []]
        sources += [t["text"] for t in history if t["speaker"] == "agent"]
        sources += [str(p.get("title") or "") for p in passages or []]
        rows.append(
            {
                "task_id": task.task_id,
                "conversation": task.task_id.split("<::>")[0],
                "label": str(task.answerability),
                "history": history,
                "question": task.question,
                "kind": kind,
                "options": options,
                "sentences": [sentence_of(option, sources) for option in options],
            }
        )
    return rows


def sentence_of(option: str, sources: Sequence[str]) -> str:
    """The first sentence of ``sources`` that holds the option's words in order ("Server-side SDK" in
    "... Server-side SDKs, ..."), else the option itself."""
    from mtrag_graph.text import sentences

    pattern = re.compile(r"\s+".join(re.escape(w) for w in option.split()), re.IGNORECASE)
    for source in sources:
        for sentence in sentences(source):
            if pattern.search(sentence):
                return sentence
    return option


def turn_text(row: dict[str, Any], with_conversation: bool) -> str:
    """The user's question, after the conversation's last user turn when ``with_conversation``."""
    users = [t["text"] for t in row["history"] if t["speaker"] == "user"]
    return " ".join([*users[-1:], row["question"]]) if with_conversation else row["question"]


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The probability that an own option scores above a foreign one (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    pos, neg = np.asarray(positives)[:, None], np.asarray(negatives)[None, :]
    return float((pos > neg).mean() + 0.5 * (pos == neg).mean())


def scored(rows: Sequence[dict[str, Any]], embed: Any, with_conversation: bool, in_sentence: bool) -> dict:
    """Own cosines by set (UNDERSPECIFIED turns), and foreign cosines (each set's options beside every
    other conversation's UNDERSPECIFIED turn)."""
    own_rows = [r for r in rows if r["label"] == "UNDERSPECIFIED"]
    turns = [turn_text(r, with_conversation) for r in own_rows]
    turn_vectors = embed(turns)
    own: list[list[float]] = []
    foreign: list[float] = []
    for i, row in enumerate(own_rows):
        vectors = embed(row["sentences"] if in_sentence else row["options"])
        own.append([float(x) for x in vectors @ turn_vectors[i]])
        for j, other in enumerate(own_rows):
            if other["conversation"] != row["conversation"]:
                foreign.extend(float(x) for x in vectors @ turn_vectors[j])
    return {"own": own, "foreign": foreign, "rows": own_rows}


def chosen_threshold(own: Sequence[float]) -> float:
    """The highest of ``THRESHOLDS`` that keeps ``OWN_KEPT`` of the own options."""
    kept = [t for t in THRESHOLDS if np.mean([x >= t for x in own]) >= OWN_KEPT]
    return max(kept, default=THRESHOLDS[0])


def report(results: dict[str, dict]) -> str:
    lines = ["| compared with | option | AUC own vs foreign | chosen threshold |", "|---|---|---|---|"]
    for name, result in results.items():
        own = [x for group in result["own"] for x in group]
        turn, form = name.split(" / ")
        lines.append(f"| {turn} | {form} | {auc(own, result['foreign']):.3f} | {chosen_threshold(own)} |")
    for name, result in results.items():
        own = [x for group in result["own"] for x in group]
        lines += [
            "",
            f"**{name}** ({len(own)} own options in {len(result['own'])} sets, {len(result['foreign'])} foreign)",
            "",
            "| threshold | own options kept | own sets still offering two | foreign options kept |",
            "|---|---|---|---|",
        ]
        for t in THRESHOLDS:
            sets = sum(sum(x >= t for x in group) >= 2 for group in result["own"])
            lines.append(
                f"| {t} | {np.mean([x >= t for x in own]):.1%} | {sets}/{len(result['own'])} | "
                f"{np.mean([x >= t for x in result['foreign']]):.1%} |"
            )
    return "\n".join(lines)


def shown(result: dict) -> str:
    """Every own option with its cosine, by turn."""
    lines = ["| turn | option | cosine |", "|---|---|---|"]
    for row, group in zip(result["rows"], result["own"], strict=True):
        for option, value in zip(row["options"], group, strict=True):
            question = row["question"].replace("|", "/")[:90]
            lines.append(f"| {question} | {option.replace('|', '/')} | {value:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from mtrag_graph.measure.decisions.sets import load_tasks
    from mtrag_graph.models import get_embedder

    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_options", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", type=Path, required=True, help="benchmark data (MTRAG_DATA)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--show", action="store_true", help="list every own option with its cosine")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = option_sets(load_tasks(args.data / TUNING))
    embed = get_embedder(args.embedder).embed
    results = {
        f"{'question after the last user turn' if conversation else 'question'} / "
        f"{'in its sentence' if sentence else 'alone'}": scored(rows, embed, conversation, sentence)
        for conversation in (False, True)
        for sentence in (False, True)
    }
    print(f"## options on the MTRAG-UN tuning slice ({len(rows)} turns offer two or more)\n")
    print(report(results))
    if args.show:
        print("\n" + shown(results["question / alone"]))
    print(f"\n{time.perf_counter() - started:.1f} s, embedder {args.embedder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
