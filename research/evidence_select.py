"""Probe: the model picks the evidence sentence that answers the question, scored by its probabilities.

For each task of a recorded run that has kept passages, the passages' sentences closest to the question
(``judging.yes_no.candidate_sentences``, MiniLM cosine) are shown lettered, with a last choice "none of
them", and the 1.5B model's probability of each letter is read from one constrained token. The output
is one JSON line per task (the candidates, the probabilities, the draft) for the offline rules of
``research.evidence_rules``.

    python -m research.evidence_select runs/rd-tuning-Y/predictions.jsonl -o runs/select-tuning.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from mtrag_graph.context import Context
from mtrag_graph.judging import yes_no
from mtrag_graph.models import get_chat_model, get_embedder
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.prompts.build import question_for_answering

LETTERS = "ABCDEFGH"
NONE = "Z"
SYSTEM = "You find the sentence of a document that answers a question."
INSTRUCTION = (
    "Sentences from the documents:\n{sentences}\n{none}. None of these sentences answers the question.\n\n"
    "Question: {question}\n\n"
    "Which sentence states the answer to the question? Reply with its letter only."
)


def select_messages(question: str, sentences: list[str]) -> list[Any]:
    lettered = "\n".join(f"{LETTERS[i]}. {s[: yes_no.SENTENCE_CHARS]}" for i, s in enumerate(sentences))
    return [
        SystemMessage(content=SYSTEM),
        HumanMessage(content=INSTRUCTION.format(sentences=lettered, none=NONE, question=question)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("predictions", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("-k", type=int, default=6, help="candidate sentences shown (at most 8)")
    args = parser.parse_args(argv)
    context = Context()
    model = get_chat_model(context.generate_model)
    embed = get_embedder(context.embedder).embed
    done = set()
    if args.output.exists():
        done = {json.loads(line)["task_id"] for line in args.output.read_text().splitlines() if line.strip()}
    records = [json.loads(line) for line in args.predictions.read_text().splitlines() if line.strip()]
    with args.output.open("a") as out:
        for record in records:
            if record["task_id"] in done:
                continue
            route = record.get("route") or {}
            state = {**route, "question": record["input"][-1]["text"]}
            question = question_for_answering(state)
            passages = record.get("contexts") or []
            draft = str((record.get("predictions") or [{}])[0].get("text") or "")
            row: dict[str, Any] = {"task_id": record["task_id"], "question": question, "draft": draft,
                                   "abstained": bool(route.get("abstained"))}  # fmt: skip
            start = time.perf_counter()
            candidates = yes_no.candidate_sentences(question, passages, embed, min(args.k, len(LETTERS)))
            row["candidates"] = [list(c) for c in candidates]
            if candidates:
                choices = [*LETTERS[: len(candidates)], NONE]
                _, probabilities, raws = score_choice(
                    model, select_messages(question, [c[1] for c in candidates]), choices, retries=1
                )
                row["p"] = {c: round(v, 4) for c, v in probabilities.items()} if probabilities else None
                row["raw"] = raws[-1] if raws else ""
            row["seconds"] = round(time.perf_counter() - start, 2)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(record["task_id"], row.get("p"), row["seconds"], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
