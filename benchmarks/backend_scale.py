"""Index backends at scale: build time, hybrid query latency and memory (a script that prints a table).

Passages are synthesised (about 60 words each from a Zipf-distributed vocabulary of 50k words) with
random unit 384-d vectors instead of MiniLM embeddings: embedding a million texts on this machine would
take hours and says nothing about the backend (ingestion speed is measured apart, docs/documents.md).
Each (backend, size) runs in its own process; memory is the peak resident memory of that process and
its children (Milvus Lite runs its engine in a child process), sampled every 0.1 s.

Both backends use an exact (flat) dense index; queries are hybrid (BM25 + dense, RRF), one at a time,
query embedding excluded (a random vector), 200 queries after 20 of warm-up.

    python -m benchmarks.backend_scale [--sizes 10000 100000 1000000] [--backends faiss milvus]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

DIM = 384
VOCAB = 50_000
WORDS_PER_PASSAGE = 60
BATCH = 20_000


def rss_tree(pid: int) -> int:
    """Resident bytes of a process and its descendants (from /proc)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                total += next((int(line.split()[1]) * 1024 for line in handle if line.startswith("VmRSS")), 0)
            with open(f"/proc/{current}/task/{current}/children") as handle:
                stack += [int(c) for c in handle.read().split()]
        except OSError:
            continue
    return total


class PeakMemory:
    def __init__(self) -> None:
        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_tree(os.getpid()))
            time.sleep(0.1)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, rss_tree(os.getpid()))


def synth(start: int, count: int, rng: np.random.Generator) -> tuple[list[dict], np.ndarray]:
    ids = rng.zipf(1.3, size=(count, WORDS_PER_PASSAGE)) % VOCAB
    rows = [
        {
            "_id": f"p{start + i}",
            "title": f"doc {start + i}",
            "text": " ".join(f"w{w}" for w in ids[i]),
            "source": f"file{(start + i) // 20}.txt",
            "page": None,
            "section": None,
            "file": f"file{(start + i) // 20}.txt",
        }
        for i in range(count)
    ]
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return rows, vectors


def one(backend: str, size: int) -> dict:
    from mtrag_graph.retrieval.backend import Fusion, commit_documents
    from mtrag_graph.retrieval.registry import BACKENDS, load_index

    memory = PeakMemory()
    rng = np.random.default_rng(0)
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=os.environ.get("SCALE_TMP")))
    out = work / "index"
    record = {f"file{i}.txt": {"sha256": "x", "passages": 0} for i in range((size + 19) // 20)}
    for i in range(size):
        record[f"file{i // 20}.txt"]["passages"] += 1

    def parts():
        for start in range(0, size, BATCH):
            yield synth(start, min(BATCH, size - start), rng)

    manifest = {"embedder": "hashing:384", "chunk": {"tokens": 512, "overlap": 100}, "faiss_kind": "flat"}
    started = time.perf_counter()
    commit_documents(
        BACKENDS[backend],
        out,
        record=record,
        parts=parts,
        drop=set(),
        dim=DIM,
        manifest=manifest,
        rebuild=True,
    )
    build = time.perf_counter() - started
    index = load_index(out)
    build_peak = memory.peak
    queries = [" ".join(f"w{w}" for w in rng.zipf(1.3, size=6) % VOCAB) for _ in range(220)]
    vectors = rng.standard_normal((220, DIM)).astype(np.float32)
    latencies = []
    for i, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        started = time.perf_counter()
        index.hybrid_ranking(query, vector / np.linalg.norm(vector), Fusion(top_k=10, depth=100))
        if i >= 20:
            latencies.append(time.perf_counter() - started)
    peak = memory.stop()
    disk = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    shutil.rmtree(work, ignore_errors=True)
    return {
        "backend": backend,
        "passages": size,
        "build_s": round(build, 1),
        "p50_ms": round(1000 * float(np.percentile(latencies, 50)), 1),
        "p95_ms": round(1000 * float(np.percentile(latencies, 95)), 1),
        "build_peak_gib": round(build_peak / 2**30, 2),
        "peak_gib": round(peak / 2**30, 2),
        "disk_gib": round(disk / 2**30, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--backends", nargs="+", default=["faiss", "milvus"])
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per (backend, size)")
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    print(
        "| backend | passages | build s | query p50 ms | query p95 ms | peak memory GiB (build) | peak GiB | disk GiB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        for backend in args.backends:
            try:
                done = subprocess.run(
                    [sys.executable, __file__, "--one", backend, str(size)],
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    check=True,
                )
            except subprocess.TimeoutExpired:
                print(f"| {backend} | {size:,} | over {args.timeout} s | | | | | |", flush=True)
                continue
            except subprocess.CalledProcessError as error:
                print(
                    f"| {backend} | {size:,} | failed: {error.stderr.strip().splitlines()[-1]} | | | | | |",
                    flush=True,
                )
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"| {backend} | {size:,} | {row['build_s']} | {row['p50_ms']} | {row['p95_ms']} | "
                f"{row['build_peak_gib']} | {row['peak_gib']} | {row['disk_gib']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
