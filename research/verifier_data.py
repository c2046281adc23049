"""The verifier's pairs: (standalone question, passage window, does the window state the answer?), built
from MTRAG's 842 reference tasks (never the MTRAG-UN dev slice, never the real-documents set), split by
conversation into train and held-out.

    python -m research.verifier_data --data $MTRAG_DATA --seed 0 -o runs/verifier-pairs.jsonl

The question is the organisers' standalone rewrite (``retrieval/mtrag/<domain>/rewrite.jsonl``, whose
``_id`` is the task id) where one exists, else the last user turn. Passages are scored as the product
scores them: window by window (``judging.verifier.passage_windows``).

- **positive**: an ANSWERABLE task's gold passage that shares the most answer words with the human answer
  (content stems of the answer that are not in the question), the window holding its answer sentence (the
  sentence sharing the most of those words). Tasks whose best sentence shares fewer than
  ``MIN_ANSWER_STEMS`` are left out: their answer is not stated in so many words.
- **answer_removed**: the same passage with its answer sentences removed (every sentence sharing at least
  half as many answer words as the best), the window where they were. Left out when what remains still
  holds half of the answer words.
- **other_passage**: the question against the passage of the task's domain (mini corpus) that BM25 ranks
  highest for it, leaving out the task's gold passages and any passage holding a third of the answer
  words: same topic, no answer.
- **unanswerable**: an UNANSWERABLE task's question against its ``UNANSWERABLE_PASSAGES`` top BM25
  passages of its domain (the first window each).

PARTIAL tasks are left out (their passages hold part of the answer), CONVERSATIONAL ones have no question.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.judging.verifier import passage_windows
from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.tasks import answerability_of, domain_of
from mtrag_graph.text import content_stems, sentences

HELD_OUT_SHARE = 0.2  # of the conversations
MIN_ANSWER_STEMS = 2
UNANSWERABLE_PASSAGES = 2
BM25_DEPTH = 20
SPLITS = ("train", "held-out")
KINDS = ("positive", "answer_removed", "other_passage", "unanswerable")


def rewrites(data_dir: Path) -> dict[str, str]:
    """The organisers' standalone rewrites by task id ("|user|: " prefix dropped)."""
    found: dict[str, str] = {}
    for path in sorted((data_dir / "retrieval" / "mtrag").glob("*/rewrite.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found[row["_id"]] = row["text"].removeprefix("|user|:").strip()
    return found


def last_user_turn(task: dict[str, Any]) -> str:
    return next(t["text"] for t in reversed(task["input"]) if t["speaker"] == "user").strip()


def answer_stems(answer: str, question: str) -> set[str]:
    return set(content_stems(answer)) - set(content_stems(question))


def shared(text: str, stems: set[str]) -> int:
    return len(stems & set(content_stems(text)))


def coverage(text: str, stems: set[str]) -> float:
    return shared(text, stems) / len(stems) if stems else 0.0


def window_with(parts: Sequence[str], index: int) -> str:
    """The first window of ``parts`` (sentences) that holds sentence ``index`` (its first words)."""
    key = parts[index][:60]
    windows = passage_windows(" ".join(parts))
    return next((w for w in windows if key in w), windows[0])


class Corpus:
    """A domain's mini corpus, BM25-searchable (bm25s, English stopwords)."""

    def __init__(self, path: Path):
        import bm25s

        self.rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        self._bm25 = bm25s.BM25()
        self._bm25.index(bm25s.tokenize([r["text"] for r in self.rows], stopwords="en", show_progress=False),
                         show_progress=False)  # fmt: skip
        self._tokenize = bm25s.tokenize

    def search(self, query: str, depth: int = BM25_DEPTH) -> list[dict[str, Any]]:
        tokens = self._tokenize([query], stopwords="en", show_progress=False)
        ids, _ = self._bm25.retrieve(tokens, k=min(depth, len(self.rows)), show_progress=False)
        return [self.rows[int(i)] for i in ids[0]]


def split_of(conversations: Sequence[str], seed: int) -> dict[str, str]:
    ordered = sorted(set(conversations))
    random.Random(seed).shuffle(ordered)
    held = set(ordered[: round(len(ordered) * HELD_OUT_SHARE)])
    return {c: ("held-out" if c in held else "train") for c in ordered}


def answerable_pairs(task: dict[str, Any], question: str, corpus: Corpus) -> list[dict[str, Any]]:
    answer = task["targets"][0]["text"]
    stems = answer_stems(answer, question)
    gold = max(task["contexts"], key=lambda c: coverage(c["text"], stems))
    parts = sentences(gold["text"])
    if not parts:
        return []
    best = max(range(len(parts)), key=lambda i: shared(parts[i], stems))
    top = shared(parts[best], stems)
    if top < MIN_ANSWER_STEMS:
        return []
    pairs = [
        {
            "kind": "positive",
            "label": 1,
            "passage": window_with(parts, best),
            "passage_id": gold["document_id"],
        }
    ]
    removed = {i for i, s in enumerate(parts) if shared(s, stems) >= top / 2}
    rest = [s for i, s in enumerate(parts) if i not in removed]
    if rest and coverage(" ".join(rest), stems) < 0.5:
        at = min(sum(1 for i in range(len(parts)) if i < min(removed) and i not in removed), len(rest) - 1)
        pairs.append({"kind": "answer_removed", "label": 0, "passage": window_with(rest, at),
                      "passage_id": gold["document_id"]})  # fmt: skip
    gold_ids = {c["document_id"] for c in task["contexts"]}
    for row in corpus.search(question):
        if row["_id"] in gold_ids or coverage(row["text"], stems) >= 1 / 3:
            continue
        pairs.append({"kind": "other_passage", "label": 0, "passage": passage_windows(row["text"])[0],
                      "passage_id": row["_id"]})  # fmt: skip
        break
    return pairs


def unanswerable_pairs(question: str, corpus: Corpus) -> list[dict[str, Any]]:
    return [
        {
            "kind": "unanswerable",
            "label": 0,
            "passage": passage_windows(row["text"])[0],
            "passage_id": row["_id"],
        }
        for row in corpus.search(question, UNANSWERABLE_PASSAGES)
    ]


def reference_tasks(
    data_dir: str | Path, seed: int = 0
) -> Iterator[tuple[dict[str, Any], str, str, Corpus, dict[str, Any]]]:
    """Each ANSWERABLE and UNANSWERABLE reference task of the tuning split, in file order, with its label,
    its question (the organisers' rewrite, else the last user turn), its domain's mini corpus (loaded once)
    and the fields every pair made from it carries (split, task, conversation, domain, question).
    ``research.evidence_scorer_fit`` builds its sentence pairs from the same tasks."""
    data_dir = Path(data_dir)
    tasks = load_split(data_dir, "tuning")
    rewritten = rewrites(data_dir)
    corpora: dict[str, Corpus] = {}
    splits = split_of([t["conversation_id"] for t in tasks], seed)
    for task in tasks:
        label = answerability_of(task)
        if label not in ("ANSWERABLE", "UNANSWERABLE"):
            continue
        domain = domain_of(task.get("Collection")) or "unknown"
        if domain not in corpora:
            corpora[domain] = Corpus(data_dir / "corpora" / "mini" / f"{domain}.jsonl")
        question = rewritten.get(task["task_id"]) or last_user_turn(task)
        base = {"split": splits[task["conversation_id"]], "task_id": task["task_id"],
                "conversation_id": task["conversation_id"], "domain": domain, "question": question}  # fmt: skip
        yield task, label, question, corpora[domain], base


def build_pairs(data_dir: str | Path, seed: int = 0) -> list[dict[str, Any]]:
    """Every pair, each with its split, kind, label, task, conversation and domain; same seed, same pairs."""
    pairs: list[dict[str, Any]] = []
    for task, label, question, corpus, base in reference_tasks(data_dir, seed):
        made = (
            answerable_pairs(task, question, corpus)
            if label == "ANSWERABLE"
            else unanswerable_pairs(question, corpus)
        )
        pairs.extend({**base, **pair} for pair in made)
    return pairs


def summary(pairs: Sequence[dict[str, Any]]) -> str:
    counts = Counter((p["split"], p["kind"]) for p in pairs)
    lines = ["| split | " + " | ".join(KINDS) + " | pairs | conversations |", "|---" * (len(KINDS) + 3) + "|"]
    for split in SPLITS:
        conversations = len({p["conversation_id"] for p in pairs if p["split"] == split})
        row = [str(counts[split, kind]) for kind in KINDS]
        lines.append(f"| {split} | " + " | ".join(row) + f" | {sum(map(int, row))} | {conversations} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the MTRAG data folder ($MTRAG_DATA)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True, help="the pairs (JSON lines)")
    args = parser.parse_args(argv)
    pairs = build_pairs(args.data, args.seed)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(json.dumps(pair, ensure_ascii=False) + "\n")
    print(summary(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
