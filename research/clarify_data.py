"""The clarify classifier's generated data: underspecified turns and their answerable twins, built from
MTRAG's 842 reference tasks (never the MTRAG-UN dev slice), split by conversation into tuning and
held-out, with every natural turn of each split beside them.

    python -m research.clarify_data --data $MTRAG_DATA --seed 0 -o runs/clarify-generated.jsonl

Underspecified forms (each with its answerable twin, the original turn, given the same passages):

- **name**, **reference**, **kind**: ``research.twins`` (a name replaced by "it" or "this/the <head
  word>"; a later turn's pronoun after another conversation's exchange; a name replaced by "the <kind>").
  The kinds here need no model: a Wikipedia-style title's bracket ("Richard III (play)" -> "play") or the
  passage's "<name> is a ... <noun>" ("Friends is an American television sitcom" -> "sitcom").
- **broad**: the question cut before the phrase that says what it is about ("What is the population of
  Israel?" -> "What is the population?"), as a first turn (a changed conversation could answer it).
- **no passages**: a seeded share (``NO_PASSAGE_SHARE``) of the pairs of every form loses its passages,
  both twins alike: the benchmark gives none for many underspecified turns.

Natural turns: every turn of the split as the benchmark labels it (ANSWERABLE, PARTIAL with passages;
UNANSWERABLE and CONVERSATIONAL without); and, in the tuning split only, the real-documents set's tuning
conversations (``benchmarks/real_documents``, questions people wrote about Debian packages' manuals;
form ``documents``), without passages: clear questions that name a tool in lower case ("How do I upload my
package with dupload?"). Each item carries ``clarify_item``: its split, form, whether it
is underspecified, whether it has passages. The split is drawn over conversation ids (seeded), and each
split's twins are built from its own turns only, so no held-out conversation feeds the tuning part.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set
from mtrag_graph.measure.decisions.sets import load_split, split_path
from mtrag_graph.tasks import answerability_of
from mtrag_graph.text import STOPWORDS
from research.twins import build_twins, file_sha256, name_sources, parse_kind

HELD_OUT_SHARE = 0.2  # of the conversations
NO_PASSAGE_SHARE = 0.4  # of the twin pairs
VARIANTS = 3  # draws of the tuning split's twins
SPLITS = ("tuning", "held-out")

_TITLE_KIND = re.compile(r"\(([a-z][a-z ]{2,30})\)\s*$")  # "Richard III (play)", "Friends (TV series)"
_COPULA = r"\s+(?:is|was|are|were)\s+(?:an?|the|one of the)\s+(?:[\w-]+\s+){0,4}?([a-z][a-z-]{2,})"
_COPULA_END = (
    r"(?=\s+(?:of|in|that|who|which|from|by|for|with|and|based|located|founded|released|written|directed|at|on|to)"
    r"\b|\s*[,.;:(])"
)
# words that end a copula phrase without naming a kind ("is a combination of", "was the first to")
_NOT_KINDS = frozenset(
    "part type kind form example number set list way one combination representation collection result "
    "member group series variety piece lot use name term top built made known used".split()
)


def passage_kind(name: str, passages: Sequence[Mapping[str, Any]]) -> str | None:
    """A common noun for the name's kind from its passages, no model: a title's bracket naming the kind
    ("Richard III (play)"), else the noun ending "<name> is a ... <noun>" in a passage's text."""
    for passage in passages:
        title = str(passage.get("title") or "")
        if title.startswith(name):
            found = _TITLE_KIND.search(title)
            if found:
                kind = parse_kind(found.group(1).split()[-1], name)
                if kind and kind not in _NOT_KINDS:
                    return kind
    copula = re.compile(re.escape(name) + r"[^.]{0,40}?" + _COPULA + _COPULA_END)
    for passage in passages:
        found = copula.search(str(passage.get("text", "")))
        if found:
            word = found.group(1)
            kind = parse_kind(word, name)
            if kind and kind not in _NOT_KINDS and not re.search(r"(?:est|ed|ly|ing)$", kind):
                return kind
    return None


def passage_kinds(tasks: Sequence[dict[str, Any]]) -> dict[str, str]:
    """name -> kind for the names of the name twins' sources (``passage_kind``)."""
    kinds: dict[str, str] = {}
    for raw, entity in name_sources(tasks):
        name = entity["name"]
        if name not in kinds:
            kind = passage_kind(name, raw["contexts"])
            if kind:
                kinds[name] = kind
    return kinds


# "What is the population of Israel?" -> "What is the population": the head of the question before the
# prepositional phrase that says what it is about
_BROAD = re.compile(
    r"^(?P<head>(?:what|which|how|who|when|where|why|can|could|do|does|is|are|tell)\b.*?\b(?:the|a|an|any|some)\s+"
    r"[a-z][a-z-]+)\s+(?:of|for|in|on|about|with|between|from|at|by|to)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
MIN_BROAD_WORDS = 3
MAX_BROAD_CONTENT = (
    2  # content words the cut question keeps: "What are the differences?", not "Do stocks ..."
)


def broad_question(question: str) -> str | None:
    """The question cut before its first prepositional phrase when that phrase holds a capitalised name
    or two content words the head does not ("What is the population?"), else None."""
    text = " ".join(question.split()).rstrip("?.! ")
    found = _BROAD.match(text)
    if found is None:
        return None
    head, rest = found.group("head"), found.group("rest")
    content = [w for w in re.findall(r"[A-Za-z]+", rest) if w.lower() not in STOPWORDS]
    named = any(w[0].isupper() for w in content)
    kept = [w for w in re.findall(r"[A-Za-z]+", head) if w.lower() not in STOPWORDS]
    if (
        len(head.split()) < MIN_BROAD_WORDS
        or len(kept) > MAX_BROAD_CONTENT
        or not (named or len(content) >= 2)
    ):
        return None
    return head[:1].upper() + head[1:] + "?"


def broad_twins(tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs of an ANSWERABLE/PARTIAL turn with passages and its question cut broad, as a first turn."""
    twins = []
    for raw in tasks:
        if answerability_of(raw) not in ("ANSWERABLE", "PARTIAL") or not raw.get("contexts"):
            continue
        question = raw["input"][-1]["text"]
        broad = broad_question(question)
        if broad is None:
            continue
        conversation = str(raw.get("conversation_id") or raw["task_id"].split("<::>")[0])
        fields = {"name": "", "kind": "", "other_name": "", "source": raw["task_id"], "form": "broad"}
        common = {
            "Collection": raw.get("Collection"),
            "contexts": raw["contexts"],
            "targets": raw.get("targets", []),
        }
        twins += [
            {
                "task_id": f"twin-answerable-broad:{raw['task_id']}",
                "conversation_id": f"twin-answerable-broad:{conversation}",
                **common,
                "input": raw["input"],
                "answerability": ["ANSWERABLE"],
                "twin": {**fields, "role": "answerable"},
            },
            {
                "task_id": f"twin-underspecified-broad:{raw['task_id']}",
                "conversation_id": f"twin-underspecified-broad:{conversation}",
                **common,
                "input": [{"speaker": "user", "text": broad}],
                "answerability": ["UNDERSPECIFIED"],
                "twin": {**fields, "role": "underspecified", "reference": broad, "history": "removed"},
            },
        ]
    return twins


def conversation_split(tasks: Sequence[dict[str, Any]], seed: int) -> dict[str, str]:
    """conversation id -> "tuning" or "held-out": ``HELD_OUT_SHARE`` of the conversations, drawn."""
    conversations = sorted({str(t.get("conversation_id") or t["task_id"].split("<::>")[0]) for t in tasks})
    held = set(
        random.Random(f"split-{seed}").sample(conversations, round(HELD_OUT_SHARE * len(conversations)))
    )
    return {c: ("held-out" if c in held else "tuning") for c in conversations}


def _item(raw: dict[str, Any], split: str, form: str) -> dict[str, Any]:
    underspecified = answerability_of(raw) == "UNDERSPECIFIED"
    return {
        **raw,
        "clarify_item": {
            "split": split,
            "form": form,
            "underspecified": underspecified,
            "passages": bool(raw.get("contexts")),
        },
    }


def document_turns(conversations: Sequence[Any]) -> list[dict[str, Any]]:
    """The real-documents set's turns in task format, without passages: ANSWERABLE or UNANSWERABLE, the
    earlier turns (question and reference answer) as the conversation."""
    tasks = []
    for conversation in conversations:
        turns: list[dict[str, str]] = []
        for number, turn in enumerate(conversation.turns, start=1):
            tasks.append(
                {
                    "task_id": f"documents:{conversation.conversation_id}<::>{number}",
                    "conversation_id": f"documents:{conversation.conversation_id}",
                    "input": [*turns, {"speaker": "user", "text": turn.question}],
                    "contexts": [],
                    "answerability": ["ANSWERABLE" if turn.answerable else "UNANSWERABLE"],
                    "targets": [{"speaker": "agent", "text": turn.answer}],
                }
            )
            turns += [{"speaker": "user", "text": turn.question}, {"speaker": "agent", "text": turn.answer}]
    return tasks


def generated_set(
    tasks: Sequence[dict[str, Any]],
    *,
    seed: int = 0,
    documents: Sequence[dict[str, Any]] = (),
    variants: int = 1,
) -> list[dict[str, Any]]:
    """The generated items of both splits (see the module's docstring), in a fixed order; ``documents``
    (``document_turns`` of the real-documents set's tuning split) join the tuning split. ``variants``:
    the tuning split's twins drawn that many times (seeds ``seed``, ``seed + 1``, ...: other references,
    conversations and passages for the same turns; ids marked ``#variant<k>``); held-out: once."""
    split_of = conversation_split(tasks, seed)
    items: list[dict[str, Any]] = []
    for split in SPLITS:
        own = [
            t
            for t in tasks
            if split_of[str(t.get("conversation_id") or t["task_id"].split("<::>")[0])] == split
        ]
        items += [_item(raw, split, "natural") for raw in own]
        if split == "tuning":
            items += [_item(raw, split, "documents") for raw in documents]
        for variant in range(variants if split == "tuning" else 1):
            items += _twin_items(own, split, seed + variant, variant)
    return items


def _twin_items(own: Sequence[dict[str, Any]], split: str, seed: int, variant: int) -> list[dict[str, Any]]:
    """One draw of the split's twin pairs (broad twins, which draw nothing, in the first only)."""
    twins = build_twins(own, seed=seed, kinds=passage_kinds(own)) + (broad_twins(own) if variant == 0 else [])
    rng = random.Random(f"passages-{split}-{seed}")
    items = []
    for answerable, underspecified in zip(twins[0::2], twins[1::2], strict=True):
        form = underspecified["twin"]["form"]
        if rng.random() < NO_PASSAGE_SHARE:
            answerable = {**answerable, "contexts": []}
            underspecified = {**underspecified, "contexts": []}
        if variant:
            answerable, underspecified = (
                {**t, "task_id": f"{t['task_id']}#variant{variant}"} for t in (answerable, underspecified)
            )
        items += [_item(answerable, split, form), _item(underspecified, split, form)]
    return items


def counts(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Items by split, form, label and passages."""
    table: Counter = Counter()
    for item in items:
        meta = item["clarify_item"]
        label = "underspecified" if meta["underspecified"] else str(answerability_of(item)).lower()
        table[f"{meta['split']} {meta['form']} {label} {'passages' if meta['passages'] else 'none'}"] += 1
    return dict(sorted(table.items()))


def tuning_documents() -> list[dict[str, Any]]:
    """The real-documents set's tuning conversations as task-format turns (``document_turns``)."""
    return document_turns(load_set().split_conversations("tuning"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_data", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=VARIANTS, help="draws of the tuning split's twins")
    args = parser.parse_args(argv)
    if not args.data:
        print("error: pass --data or set MTRAG_DATA to the benchmark data folder", file=sys.stderr)
        return 2
    items = generated_set(
        load_split(args.data, "tuning"), seed=args.seed, documents=tuning_documents(), variants=args.variants
    )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in items), encoding="utf-8")
    source = split_path(args.data, "tuning")
    summary = {
        "input": str(source),
        "input_sha256": file_sha256(source),
        "seed": args.seed,
        "variants": args.variants,
        "items": len(items),
        "counts": counts(items),
        "output_sha256": file_sha256(out),
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
