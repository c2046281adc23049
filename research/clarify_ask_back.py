"""The model's ask-back judgement for turns without passages, tried and not kept: score a stratified
sample of the generated data, fit the two-input decision, measure it.

    python -m research.clarify_ask_back score --split tuning --size 120 --model qwen2.5-coder-0.5b \
        --variant which -o runs/ask-back/tuning-0.5b-which.jsonl
    python -m research.clarify_ask_back screen runs/ask-back/tuning-*.jsonl
    python -m research.clarify_ask_back fit --scores runs/ask-back/tuning-1.5b-which.jsonl \
        --classifier-scores runs/clarify-scores.jsonl -o research/data/clarify_ask_back.json
    python -m research.clarify_ask_back report --scores runs/ask-back/held-out-1.5b-which.jsonl ...

Every item is judged as the no-passage decision sees it: the conversation and the question, its
passages left out (the model reads no passages). ``score`` appends one line per item and skips the items
already in its output, so a stopped run goes on where it stopped. The sample is drawn per stratum (form x
label), seeded, in a fixed order: a smaller sample is a prefix of a larger one, so the screening's
scores are reused by the fit. The classifier's scores (``research.clarify_fit --scores``) give the
no-passage model's out-of-fold scores on the tuning split and its scores on the held-out split.

The judgement: one reply token of a yes/no question ("Can this last question be answered without asking
the user which ... they mean?") whose yes/no log-probabilities give the probability that the turn must
be asked back; its log-odds join the classifier's no-passage score (``research/clarify_classifier.py``)
in a two-input logistic regression (``research/data/clarify_ask_back.json`` with its card). LLM output is
untrusted: a reply whose first token puts too little probability on yes or no gives None. On the
MTRAG-UN dev slice it asked none of the 5 underspecified turns without passages, so the product decides
such turns with the no-passage model (``judging/clarify_no_passages.py``; benchmarks/results/clarify.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models.chat_models import BaseChatModel

from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.calls import invoke_text
from mtrag_graph.models.capabilities import capabilities_of
from mtrag_graph.prompts.build import clarify_messages
from mtrag_graph.tasks import answerability_of
from research.clarify_data import VARIANTS, generated_set, tuning_documents
from research.clarify_fit import fit_logistic, group_of, out_of_fold, threshold_for, turn_of
from research.twins import file_sha256

DEFAULT = Path(__file__).resolve().parent / "data" / "clarify_ask_back.json"

# Whether the last question can be answered as it stands, from the conversation and the question alone
# (no passages): one reply token, whose yes/no probabilities give the ask-back log-odds ("no" means ask
# back), chosen on the generated data's tuning split against a plain question ("which" below;
# benchmarks/results/clarify.md).
# worked examples first (a prefix every call shares, processed once), written for the forms of issue 50;
# the Mars one paraphrases a dev-slice turn that docs/clarify.md quotes ("How can we enhance its
# performance?"), so the dev report counts that turn apart (benchmarks/results/clarify.md)
ASK_BACK = (
    "Decide whether the last question can be answered without asking the user which person, place, thing "
    'or topic they mean. Answer no when it points at something ("it", "she", "this ...", "the ...") that '
    "neither it nor the conversation names, or is too broad for one answer; else yes.\n\n"
    "Conversation so far:\nUser: How do I renew my passport?\nAgent: Fill in form DS-82 and mail it.\n"
    "Last question: What are the opening hours of the clinic?\nAnswer: no\n\n"
    "Conversation so far:\n(this is the first turn)\nLast question: How many seasons did the show run?\n"
    "Answer: no\n\n"
    "Conversation so far:\nUser: Who was Marie Curie?\nAgent: A physicist and chemist who studied "
    "radioactivity.\nLast question: When did she win her second Nobel prize?\nAnswer: yes\n\n"
    "Conversation so far:\n(this is the first turn)\nLast question: What are the steps?\nAnswer: no\n\n"
    "Conversation so far:\n(this is the first turn)\nLast question: What is the boiling point of water at "
    "sea level?\nAnswer: yes\n\n"
    "Conversation so far:\nUser: What is the weather like on Mars?\nAgent: Cold and dry, with dust "
    "storms.\nLast question: How can we improve its performance?\nAnswer: no\n\n"
    "Conversation so far:\nUser: How do I make a list in Python?\nAgent: Use square brackets: [1, 2, 3].\n"
    "Last question: How do I sort it in reverse order?\nAnswer: yes\n\n"
    "Conversation so far:\n{conversation}\nLast question: {question}\nAnswer (yes or no):"
)

TOP_LOGPROBS = 20
# the share of the first token's top alternatives that must be a yes or a no for the reply to count: a
# reply that opens otherwise ("The question ...") says nothing on the yes/no
MIN_CHOICE_MASS = 0.5
MAX_LOG_ODDS = 12.0  # a probability of 0 or 1 read as this many nats


def yes_no_mass(logprobs: Any) -> dict[str, float] | None:
    """The probability of "yes" and of "no" (any case, quotes stripped) among the first reply token's
    top alternatives (OpenAI logprobs format), or None when the format is wrong or they hold less than
    ``MIN_CHOICE_MASS``."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    alternatives = first.get("top_logprobs") or [first]
    mass = {"yes": 0.0, "no": 0.0}
    for alternative in alternatives:
        if not isinstance(alternative, dict):
            return None
        token = str(alternative.get("token", "")).strip().strip("\"'`*.").lower()
        try:
            logprob = float(alternative["logprob"])
        except (KeyError, TypeError, ValueError):
            return None
        if token in mass and math.isfinite(logprob):
            mass[token] += math.exp(logprob)
    return mass if sum(mass.values()) >= MIN_CHOICE_MASS else None


def ask_back_log_odds(mass: Mapping[str, float], ask_reply: str) -> float:
    """log(P(ask) / P(answer)) from the yes/no mass, bounded by ``MAX_LOG_ODDS``."""
    ask, answer = mass[ask_reply], mass["no" if ask_reply == "yes" else "yes"]
    if ask <= 0 or answer <= 0:
        return MAX_LOG_ODDS if ask > 0 else -MAX_LOG_ODDS
    return max(-MAX_LOG_ODDS, min(MAX_LOG_ODDS, math.log(ask / answer)))


def ask_back_judgement(
    model: BaseChatModel,
    history: Sequence[dict[str, str]],
    question: str,
    instruction: str = ASK_BACK,
    ask_reply: str = "no",
) -> tuple[float | None, str]:
    """The model's ask-back log-odds for the turn, from the conversation and the question alone
    (``instruction``, whose reply ``ask_reply`` means ask back); None (and why) when the backend gives no
    log-probabilities or the reply names neither yes nor no."""
    if ask_reply not in ("yes", "no"):
        raise ValueError(f"ask_reply must be 'yes' or 'no', got {ask_reply!r}")
    if not capabilities_of(model).logprobs:
        return None, "no log-probabilities from this model"
    messages = clarify_messages(instruction, history, question, None)
    reply = invoke_text(model, messages, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
    mass = yes_no_mass((reply.response_metadata or {}).get("logprobs"))
    if mass is None:
        return None, f"unparsed reply {str(reply.content)[:40]!r}"
    return ask_back_log_odds(mass, ask_reply), f"yes {mass['yes']:.3f} no {mass['no']:.3f}"


@dataclass(frozen=True)
class AskBackModel:
    """The no-passage decision: a logistic regression over the model's ask-back log-odds and the trained
    classifier's no-passage log-odds, its threshold, the model and prompt it was fitted with, its card."""

    model: str
    variant: str  # the prompt it was fitted with (``ASK_BACK_VARIANTS``: "examples")
    classifier: str  # the clarify classifier whose no-passage score is the second input
    coef: tuple[float, float]  # model log-odds, classifier log-odds
    intercept: float
    threshold: float
    card: Mapping[str, Any]

    def probability(self, model_log_odds: float, classifier_log_odds: float) -> float:
        z = self.intercept + self.coef[0] * model_log_odds + self.coef[1] * classifier_log_odds
        return 1 / (1 + math.exp(-max(min(z, 50.0), -50.0)))


def parse_ask_back(text: str) -> AskBackModel:
    data = json.loads(text)
    coef = tuple(float(c) for c in data["coef"])
    if len(coef) != 2:
        raise ValueError(f"ask-back model: two coefficients expected, got {len(coef)}")
    return AskBackModel(
        model=str(data["model"]),
        variant=str(data["variant"]),
        classifier=str(data.get("classifier", "default")),
        coef=(coef[0], coef[1]),
        intercept=float(data["intercept"]),
        threshold=float(data["threshold"]),
        card=data.get("card", {}),
    )


@cache
def load_ask_back(spec: str = "default") -> AskBackModel:
    """``"default"`` (``research/data/clarify_ask_back.json``) or a path to a JSON file."""
    return parse_ask_back((DEFAULT if spec == "default" else Path(spec)).read_text(encoding="utf-8"))


def log_odds(probability: float) -> float:
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


# the prompts screened: name -> (template, the reply that means ask back); "examples" (``ASK_BACK``) is
# the one the decision file was fitted with
ASK_BACK_VARIANTS = {
    "which": (
        "Conversation so far:\n{conversation}\n\nLast question: {question}\n\nCan this last question be "
        "answered without asking the user which person, place, thing or topic they mean? Reply with only "
        "yes or no.",
        "no",
    ),
    "examples": (ASK_BACK, "no"),
}

# the share of each stratum in a sample: underspecified forms, then the clear turns the decision must
# leave alone (natural turns of the benchmark, the real-documents turns, the answerable twins)
STRATA = {
    "UNDERSPECIFIED name": 0.15,
    "UNDERSPECIFIED reference": 0.15,
    "UNDERSPECIFIED kind": 0.10,
    "UNDERSPECIFIED broad": 0.10,
    "clear natural": 0.20,
    "clear documents": 0.08,
    "clear twin": 0.22,
}
FALSE_ALARM = (
    0.03  # of the clear tuning turns in the sample, out of fold (the classifier's no-passage target)
)


def stratum(item: dict[str, Any]) -> str:
    meta = item["clarify_item"]
    if meta["underspecified"]:
        return f"UNDERSPECIFIED {meta['form']}"
    return "clear " + ("twin" if meta["form"] not in ("natural", "documents") else meta["form"])


def label_of(item: dict[str, Any]) -> str:
    meta = item["clarify_item"]
    label = "UNDERSPECIFIED" if meta["underspecified"] else str(answerability_of(item))
    form = meta["form"] if meta["form"] in ("natural", "documents") else f"{meta['form']} twin"
    return f"{label} {form}"


def sample(items: Sequence[dict[str, Any]], split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """A stratified sample of one split: per stratum its share of ``size`` (all of it when smaller), each
    stratum in a seeded order, interleaved so a shorter sample is a prefix of a longer one."""
    by_stratum: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        if item["clarify_item"]["split"] == split:
            by_stratum[stratum(item)].append(item)
    for name, group in by_stratum.items():
        random.Random(f"{seed}-{name}").shuffle(group)
    # the item's position in its stratum over the stratum's quota: the order of the whole sample
    ranked = []
    for name, share in STRATA.items():
        for position, item in enumerate(by_stratum.get(name, [])):
            ranked.append(((position + 1) / (share * size), name, position, item))
    ranked.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in ranked if entry[0] <= 1.0][:size]


def generated(data: str, seed: int) -> list[dict[str, Any]]:
    return generated_set(
        load_split(data, "tuning"), seed=seed, documents=tuning_documents(), variants=VARIANTS
    )


def score(args: argparse.Namespace) -> None:
    items = sample(generated(args.data, args.seed), args.split, args.size, args.seed)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["task_id"] for line in out.read_text().splitlines()} if out.exists() else set()
    model = get_chat_model(args.model)
    with out.open("a", encoding="utf-8") as sink:
        for item in items:
            if item["task_id"] in done:
                continue
            history, question, _ = turn_of(item)
            started = time.perf_counter()
            template, ask_reply = ASK_BACK_VARIANTS[args.variant]
            value, evidence = ask_back_judgement(model, history, question, template, ask_reply)
            row = {
                "task_id": item["task_id"],
                "split": args.split,
                "stratum": stratum(item),
                "label": label_of(item),
                "underspecified": item["clarify_item"]["underspecified"],
                "passages": item["clarify_item"]["passages"],
                "group": group_of(item),
                "model": args.model,
                "variant": args.variant,
                "log_odds": value,
                "evidence": evidence,
                "seconds": round(time.perf_counter() - started, 3),
            }
            sink.write(json.dumps(row) + "\n")
            sink.flush()
    print(f"{out}: {len(items)} items", file=sys.stderr)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The probability that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def screen(args: argparse.Namespace) -> None:
    """Per scores file, on the items all of them scored: AUC (underspecified against clear), the recall at 3% and at 10% of the clear
    turns asked (in-sample thresholds: a screen, not an estimate), unparsed replies, seconds."""
    print("| file | items | unparsed | AUC | AUC natural | recall @3% clear | @10% | median s |")
    print("|---|---|---|---|---|---|---|---|")
    every = {str(path): read_rows(path) for path in args.files}
    common = set.intersection(*({r["task_id"] for r in rows} for rows in every.values()))
    for path, all_rows in every.items():
        rows = [r for r in all_rows if r["task_id"] in common]  # the items every file scored
        kept = [r for r in rows if r["log_odds"] is not None]
        pos = [r["log_odds"] for r in kept if r["underspecified"]]
        neg = [r["log_odds"] for r in kept if not r["underspecified"]]
        natural = [r["log_odds"] for r in kept if r["stratum"] in ("clear natural", "clear documents")]
        cells = []
        for share in (0.03, 0.10):
            threshold = threshold_for(neg, share)
            cells.append(f"{sum(p >= threshold for p in pos)}/{len(pos)}")
        seconds = sorted(r["seconds"] for r in rows)
        print(
            f"| {Path(path).name} | {len(rows)} | {len(rows) - len(kept)} | {auc(pos, neg):.3f} | "
            f"{auc(pos, natural):.3f} | {cells[0]} | {cells[1]} | {seconds[len(seconds) // 2]:.2f} |"
        )


def classifier_scores(path: str | Path) -> dict[str, float]:
    """task id -> the classifier's no-passage score (out of fold on tuning, fitted model on held-out)."""
    return {r["task_id"]: r["score"] for r in read_rows(path) if r["setting"] == "none"}


def inputs(rows: Sequence[dict[str, Any]], classifier: dict[str, float]) -> np.ndarray:
    """The two inputs of each row: the model's log-odds (0 when unparsed) and the classifier's."""
    return np.array([[r["log_odds"] or 0.0, log_odds(classifier[r["task_id"]])] for r in rows])


def fit(args: argparse.Namespace) -> None:
    rows = read_rows(args.scores)
    classifier = classifier_scores(args.classifier_scores)
    x = inputs(rows, classifier)
    y = np.array([float(r["underspecified"]) for r in rows])
    groups = [r["group"] for r in rows]
    # the threshold's negatives: the benchmark's natural turns and the real-documents turns, as for the
    # classifier (research.clarify_fit); the answerable twins are in the fit, not in the threshold
    clear = np.array([r["stratum"] in ("clear natural", "clear documents") for r in rows])
    columns = {"model + classifier": [0, 1], "model": [0], "classifier": [1]}
    results = {}
    for name, cols in columns.items():
        oof = out_of_fold(x[:, cols], y, groups, args.l2)
        threshold = threshold_for(oof[clear].tolist(), FALSE_ALARM)
        recall = float((oof[y == 1] >= threshold).mean())
        results[name] = (recall, threshold)
        print(
            f"{name}: out-of-fold recall {recall:.3f} at {FALSE_ALARM:.0%} of the natural turns",
            file=sys.stderr,
        )
    # fitted on raw inputs (no standardising): two log-odds on one scale, the file stays readable
    coef, intercept = fit_logistic(x, y, args.l2)
    oof = out_of_fold(x, y, groups, args.l2)
    threshold = threshold_for(oof[clear].tolist(), FALSE_ALARM)
    first = rows[0]
    card = {
        "command": "python -m research.clarify_ask_back fit " + " ".join(sys.argv[2:]),
        "data": "a stratified sample of the generated set's tuning split (research/clarify_data.py, seed "
        f"{args.seed}), every turn without its passages; never the MTRAG-UN dev slice",
        "scores": "python -m research.clarify_ask_back score --split tuning --size "
        f"{len(rows)} --model {rows[0]['model']} --variant {rows[0]['variant']} -o SCORES.jsonl",
        "scores_sha256": file_sha256(Path(args.scores)),
        "items": len(rows),
        "underspecified": int(y.sum()),
        "l2": args.l2,
        "false_alarm_target": FALSE_ALARM,
        "out_of_fold_recall": {name: round(r, 4) for name, (r, _) in results.items()},
        "inputs": ["the model's ask-back log-odds", "the clarify classifier's no-passage log-odds"],
    }
    data = {
        "model": first["model"],
        "variant": first["variant"],
        "classifier": "default",
        "coef": [round(float(c), 6) for c in coef],
        "intercept": round(intercept, 6),
        "threshold": round(threshold, 6),
        "card": card,
    }
    Path(args.output).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=1))


def live_classifier_scores(data: str, seed: int, task_ids: set[str]) -> dict[str, float]:
    """task id -> the shipped classifier's no-passage probability, the item's passages left out (one
    MiniLM embedding each, cached)."""
    from research.clarify_classifier import classifier_row, load_clarify_classifier

    classifier = load_clarify_classifier("default")
    found = {}
    for item in generated(data, seed):
        if item["task_id"] in task_ids and item["task_id"] not in found:
            history, question, _ = turn_of(item)
            found[item["task_id"]] = classifier.probability(
                classifier_row(history, question, None, classifier), None
            )
    return found


def _group(row: dict[str, Any]) -> str:
    """The report's summary row: underspecified, answerable twins, natural turns; with or without the
    passages the benchmark gives."""
    where = "passages removed" if row["passages"] else "no passages"
    if row["underspecified"]:
        return f"= UNDERSPECIFIED, {where}"
    if row["stratum"] == "clear twin":
        return f"= ANSWERABLE twins, {where}"
    return f"= natural {'ANSWERABLE+PARTIAL' if row['passages'] else 'UNANSWERABLE+CONVERSATIONAL'}, {where}"


def report(args: argparse.Namespace) -> None:
    """Asked / total by label on a scored sample, every turn without its passages: the fitted decision
    (``--ask-back``) and the shipped classifier's no-passage model alone (the model-free signals ask no
    turn without passages)."""
    from research.clarify_classifier import load_clarify_classifier

    decision = load_ask_back(args.ask_back)
    rows = read_rows(args.scores)
    classifier = live_classifier_scores(args.data, args.seed, {r["task_id"] for r in rows})
    none_threshold = load_clarify_classifier("default").models["none"].threshold
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row in rows:
        c = classifier[row["task_id"]]
        asked = {
            "ask-back": row["log_odds"] is not None
            and decision.probability(row["log_odds"], log_odds(c)) >= decision.threshold,
            "classifier (no-passage model)": c >= none_threshold,
        }
        label = row["label"] + (" (passages removed)" if row["passages"] else " (no passages)")
        for name, ask in asked.items():
            for key in (label, _group(row)):
                table[name][key][0] += ask
                table[name][key][1] += 1
    names = list(table)
    print("| class | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for key in sorted({k for t in table.values() for k in t}):
        cells = [f"{table[n][key][0]}/{table[n][key][1]}" for n in names]
        print(f"| {key} | " + " | ".join(cells) + " |")
    seconds = sorted(r["seconds"] for r in rows)
    unparsed = sum(r["log_odds"] is None for r in rows)
    print(
        f"\nmodel call: median {seconds[len(seconds) // 2]:.2f} s, max {seconds[-1]:.2f} s; unparsed {unparsed}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_ask_back", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("--seed", type=int, default=0)
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("score")
    s.add_argument("--split", choices=("tuning", "held-out"), required=True)
    s.add_argument("--size", type=int, required=True)
    s.add_argument("--model", required=True)
    s.add_argument("--variant", choices=tuple(ASK_BACK_VARIANTS), required=True)
    s.add_argument("-o", "--output", required=True)
    sc = commands.add_parser("screen")
    sc.add_argument("files", nargs="+")
    f = commands.add_parser("fit")
    f.add_argument("--scores", required=True)
    f.add_argument("--classifier-scores", required=True)
    f.add_argument("--l2", type=float, default=1.0)
    f.add_argument("-o", "--output", required=True)
    r = commands.add_parser("report")
    r.add_argument("--scores", required=True)
    r.add_argument("--ask-back", default="default")
    args = parser.parse_args(argv)
    if args.command in ("score", "report") and not args.data:
        print("error: pass --data or set MTRAG_DATA", file=sys.stderr)
        return 2
    {"score": score, "screen": screen, "fit": fit, "report": report}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
