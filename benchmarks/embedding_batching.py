"""Does merging concurrent embedding requests into shared batches help? Reranking work of N tasks at once.

    python -m benchmarks.embedding_batching /work/shared/data/mtrag/tasks/mtrag_reference.jsonl

Each "task" embeds its question and its passages (what the rerank node asks for), all texts distinct
(no cache hits). N threads run the tasks, 4N in all; per mode: tasks/s, CPU seconds per task (all threads:
the efficiency, independent of how much of a shared machine the run gets) and peak resident memory
above the loaded model. Every mode embeds the same tasks. Modes: ``separate`` (every request its own forward pass, requests of different
threads running at the same time), ``merged-B`` (``CoalescingEncoder``: one forward pass at a time over
the requests queued meanwhile, at most B texts per pass).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.throughput import PeakSampler, rss_mb
from mtrag_graph.models.batching import CoalescingEncoder
from mtrag_graph.models.bundled import minilm_path
from mtrag_graph.models.embeddings import Embedder, sentence_transformer_encoder
from mtrag_graph.runtime.concurrency import run_bounded


def task_texts(path: str, n: int) -> list[list[str]]:
    texts = []
    for line in Path(path).read_text(encoding="utf-8").splitlines()[:n]:
        task = json.loads(line)
        question = task["input"][-1]["text"]
        texts.append([question, *[c["text"] for c in task.get("contexts", [])[:5]]])
    return texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--batch", type=int, nargs="+", default=[32, 128], help="merged modes' B")
    parser.add_argument("-o", "--output", help="append the table to this markdown file")
    args = parser.parse_args()
    encode = sentence_transformer_encoder(str(minilm_path()))
    texts = task_texts(args.tasks, 4 * max(args.levels))
    lines = [
        f"# python -m benchmarks.embedding_batching {args.tasks} --levels {' '.join(map(str, args.levels))} "
        f"--batch {' '.join(map(str, args.batch))}",
        "",
        "| threads | mode | tasks | s | tasks/s | CPU s per task | forward passes | peak RSS above loaded MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for level in args.levels:
        modes = [("separate", None)] + [(f"merged-{b}", b) for b in args.batch]
        for name, batch in modes:
            work = texts[: 4 * level]  # the same tasks for every mode (each mode starts with an empty cache)
            calls = [0]

            def counted(batch_texts: list[str], calls: list[int] = calls) -> object:
                calls[0] += 1
                return encode(batch_texts)

            coder = counted if batch is None else CoalescingEncoder(counted, max_texts=batch)
            embedder = Embedder(name, coder)  # type: ignore[arg-type]
            calls[0] = 0
            base, sampler = rss_mb(), PeakSampler()
            sampler.start()
            started, cpu = time.perf_counter(), time.process_time()
            for _ in run_bounded(embedder.embed, work, level):
                pass
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            peak = sampler.stop()
            lines.append(
                f"| {level} | {name} | {len(work)} | {seconds:.1f} | {len(work) / seconds:.2f} "
                f"| {cpu / len(work):.2f} | {calls[0]} "
                f"| {peak - base:.0f} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
