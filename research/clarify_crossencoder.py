"""The bundled MiniLM fine-tuned as a cross-encoder for "does this turn leave open what it means?", read
from the question and the last exchange alone (no passages): issue 50's suggestion of a classifier
trained here, tried for the turns that come without passages.

    OMP_NUM_THREADS=1 python -m research.clarify_crossencoder --data $MTRAG_DATA -o runs/clarify-ce
    OMP_NUM_THREADS=1 python -m research.clarify_crossencoder --data $MTRAG_DATA -o runs/clarify-ce --dev

Pairs: (question, "user: <last user turn> agent: <last agent turn>", or "(first turn)"), label 1 for an
underspecified turn. Trained on the generated set's tuning split (``research.clarify_data``, seed 0,
built again here: the underspecified twins, their answerable twins, every natural tuning turn and the
real-documents tuning turns), passages left out of every item, as ``research.verifier_fit`` trains the
verifier: the top two encoder layers and a one-logit head, the lower layers' states computed once, four
epochs, positives weighted up. The threshold asks 3% of the natural tuning turns, as the shipped
no-passage model's does. Printed: the generated held-out split by class, the real-documents set's
answerable turns (a stress test: decided without passages), and with ``--dev`` (once, the report) the
MTRAG-UN dev slice's turns that come without passages. Nothing is shipped from here; the weights stay
in the output folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from research.clarify_data import generated_set
from research.clarify_fit import turn_of

FALSE_ALARM = 0.03  # of the natural tuning turns
TURN_WORDS = 60  # of each turn of the last exchange shown


def _cut(text: str) -> str:
    words = text.split()
    return " ".join(words[:TURN_WORDS]) + (" ..." if len(words) > TURN_WORDS else "")


def exchange(history: list[dict[str, str]]) -> str:
    """The last exchange as the second segment ("(first turn)" when there is none)."""
    users = [t["text"] for t in history if t["speaker"] == "user"]
    agents = [t["text"] for t in history if t["speaker"] == "agent"]
    if not users:
        return "(first turn)"
    return f"user: {_cut(users[-1])} agent: {_cut(agents[-1]) if agents else ''}".strip()


def pair_of(history: list[dict[str, str]], question: str, label: int, group: str) -> dict[str, Any]:
    return {"question": question, "passage": exchange(history), "label": label, "group": group}


def generated_pairs(data: str, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tuning pairs, held-out pairs) of the generated set, passages left out."""
    from mtrag_graph.measure.decisions.sets import load_split

    tuning: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for item in generated_set(load_split(data, "tuning"), seed=seed):
        meta = item["clarify_item"]
        history, question, _ = turn_of(item)
        natural = meta["form"] in ("natural", "documents")
        group = (
            "natural" if natural else "underspecified twin" if meta["underspecified"] else "answerable twin"
        )
        group += "" if meta["passages"] else " (arrives without passages)"
        pair = pair_of(history, question, int(bool(meta["underspecified"])), group)
        (tuning if meta["split"] == "tuning" else held).append(pair)
    return tuning, held


def real_document_pairs() -> list[dict[str, Any]]:
    from benchmarks.real_documents.data import load_set

    pairs = []
    question_set = load_set()
    for split in ("tuning", "report"):
        for conversation in question_set.split_conversations(split):
            history: list[dict[str, str]] = []
            for turn in conversation.turns:
                if turn.answerable:
                    pairs.append(pair_of(list(history), turn.question, 0, f"real documents {split}"))
                history += [
                    {"speaker": "user", "text": turn.question},
                    {"speaker": "agent", "text": turn.answer},
                ]
    return pairs


def dev_pairs(data: str) -> list[dict[str, Any]]:
    from mtrag_graph.measure.decisions.sets import load_split

    pairs = []
    for raw in load_split(data, "report"):
        history, question, passages = turn_of(raw)
        if passages:
            continue
        label = str((raw.get("answerability") or raw.get("Answerability") or ["?"])[0])
        pairs.append(
            pair_of(history, question, int(label == "UNDERSPECIFIED"), f"dev B without passages: {label}")
        )
    return pairs


def rates(pairs: list[dict[str, Any]], scores: list[float], threshold: float) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pair, score in zip(pairs, scores, strict=True):
        out[pair["group"]][0] += score >= threshold
        out[pair["group"]][1] += 1
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    import torch
    from transformers import AutoTokenizer

    from mtrag_graph import settings
    from mtrag_graph.judging.verifier import load_network
    from mtrag_graph.models.bundled import minilm_path
    from research import verifier_fit as vf

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=vf.EPOCHS)
    parser.add_argument("--dev", action="store_true", help="also the MTRAG-UN dev slice (the report: once)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    settings.offline_hub()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    train, held = generated_pairs(args.data, args.seed)
    base = str(minilm_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    encoder, head = load_network(base)
    encoder.eval()
    started = time.time()
    states = vf.frozen_states(encoder, tokenizer, train)
    print(f"{len(train)} tuning pairs ({sum(p['label'] for p in train)} underspecified); frozen states "
          f"{time.time() - started:.0f}s", flush=True)  # fmt: skip
    vf.train_top_layers(
        encoder,
        head,
        states,
        [p["label"] for p in train],
        epochs=args.epochs,
        seed=args.seed,
        started=started,
    )
    natural = [p for p in train if p["group"].startswith("natural")]
    natural_scores = sorted(vf.score_pairs(encoder, head, tokenizer, natural), reverse=True)
    threshold = natural_scores[int(len(natural_scores) * FALSE_ALARM)]
    sets = {"generated held-out": held, "real documents (stress: without passages)": real_document_pairs()}
    if args.dev:
        sets["MTRAG-UN dev (the report)"] = dev_pairs(args.data)
    report: dict[str, Any] = {"threshold": threshold, "tuning_pairs": len(train), "epochs": args.epochs}
    lines = [f"threshold {threshold:.3f} (3% of {len(natural)} natural tuning turns, in sample)", ""]
    for name, pairs in sets.items():
        scores = vf.score_pairs(encoder, head, tokenizer, pairs)
        gold = [int(p["label"]) for p in pairs]
        report[name] = {"auc": vf.auc(gold, scores), "asked": rates(pairs, scores, threshold)}
        lines += [f"## {name} (AUC {vf.auc(gold, scores):.3f})", "", "| turns | asked |", "|---|---|"]
        for group, (asked, total) in sorted(report[name]["asked"].items()):
            lines.append(f"| {group} | {asked}/{total} ({asked / total:.0%}) |")
        lines.append("")
        with (args.output / f"scores-{name.split()[0]}.jsonl").open("w", encoding="utf-8") as out:
            for pair, score in zip(pairs, scores, strict=True):
                out.write(json.dumps({**pair, "score": round(score, 4)}, ensure_ascii=False) + "\n")
    (args.output / "report.json").write_text(json.dumps(report, indent=1, default=str))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
