"""Synthetic questions for the evidence scorer from a user's own indexed documents: the bundled 1.5B
writes, for a sampled passage sentence, a question a reader would ask that the sentence answers.

    python -m research.evidence_scorer_synth INDEX_DIR -n 300 -o runs/escore/synth-tuning.jsonl

Only the real-documents **tuning** index is used for training data (its documents are not those of the
fresh or report splits). Each line: the question, its sentence, the passage id and the passage's other
sentences (negatives for training).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from mtrag_graph.prompts.excerpts import evidence_spans

PROMPT = (
    "Here is part of the documentation of {title}:\n\n{context}\n\n"
    'Write one question that a user of {title} might ask and that this sentence answers:\n"{sentence}"\n'
    "Ask it the way a user would, in your own words, without copying the sentence. "
    "Reply with the question only."
)
_INFORMATIVE = re.compile(r"\d|--?\w|`|\w+\(|=|\b(default|must|can|cannot|only|use|set)\b", re.I)


def sentences_of(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in evidence_spans(text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path, help="an index folder (passages.jsonl)")
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    from llama_cpp import Llama

    from mtrag_graph.models.bundled import gguf_path

    rows = [json.loads(line) for line in (args.index / "passages.jsonl").read_text().splitlines() if line]
    pool = []
    for row in rows:
        parts = sentences_of(row["text"])
        for i, s in enumerate(parts):
            if 40 <= len(s) <= 400 and _INFORMATIVE.search(s) and len(parts) >= 4:
                pool.append((row, i, parts))
    random.Random(args.seed).shuffle(pool)
    llm = Llama(str(gguf_path("qwen2.5-coder-1.5b")), n_ctx=2048, n_threads=2, verbose=False)
    done = set()
    if args.output.exists():
        done = {json.loads(line)["sentence"] for line in args.output.read_text().splitlines() if line}
    started = time.time()
    with args.output.open("a", encoding="utf-8") as out:
        for row, i, parts in pool[: args.n]:
            if parts[i] in done:
                continue
            context = " ".join(parts[max(0, i - 2) : i + 3])[:1200]
            title = str(row.get("title") or row.get("source") or "the software")
            prompt = PROMPT.format(title=title, context=context, sentence=parts[i])
            response: Any = llm.create_chat_completion(
                messages=[{"role": "user", "content": prompt}], temperature=0.7, max_tokens=48, seed=args.seed
            )
            reply = str(response["choices"][0]["message"]["content"] or "").strip().splitlines()[0:1]
            question = reply[0].strip().strip('"') if reply else ""
            if not question.endswith("?") or len(question) < 12:
                continue
            out.write(
                json.dumps(
                    {
                        "question": question,
                        "sentence": parts[i],
                        "passage_id": row["_id"],
                        "others": [p for j, p in enumerate(parts) if j != i],
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
            out.flush()
    print(f"{time.time() - started:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
