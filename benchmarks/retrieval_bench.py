"""Retrieval benchmark (a script, not a test).

Table 1: nDCG@5 / Recall@5 per domain on corpora/mini with the MTRAG queries and qrels, for BM25, dense
and hybrid retrieval, each with the last-turn queries and the organisers' rewrites (and the graph's own
rewrites with ``--graph-rewrites FILE`` of ``{"_id", "text"}`` lines); with index build speed and query
latency (p50/p95, one query at a time, query embedding included for hybrid).
Table 2: FAISS build and query time on synthetic 384-d vectors, exact vs approximate (HNSW, IVF), with
the approximate indexes' recall@10 against exact search.

    python -m benchmarks.retrieval_bench [--data DIR] [--index-dir DIR] [--graph-rewrites FILE]
        [--faiss-vectors 1000000] [--faiss-queries 1000] [--skip-mini] [--skip-faiss]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from mtrag_graph import settings
from mtrag_graph.retrieval.index import build_index, make_faiss_index
from mtrag_graph.retrieval.metrics import aggregate, load_qrels, normalise_qid, score_queries
from mtrag_graph.retrieval.registry import load_index
from mtrag_graph.retrieval.search import clean_query, search
from mtrag_graph.tasks import read_jsonl

REPO = Path(__file__).resolve().parents[1]

DOMAINS = ("clapnq", "cloud", "fiqa", "govt")
MODES = ("hybrid", "dense", "bm25")  # hybrid first: its timed pass embeds each query for the first time


def read_queries(path: Path) -> dict[str, str]:
    return {
        normalise_qid(row["_id"]): clean_query(row["text"]) for _, row, err in read_jsonl(path) if not err
    }


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def mini_table(args: argparse.Namespace) -> None:
    data = Path(args.data)
    indexes, builds, qrels, query_sets = {}, {}, {}, {}
    for domain in DOMAINS:
        report = build_index(
            data / "corpora/mini" / f"{domain}.jsonl",
            Path(args.index_dir) / domain,
            embedder=args.embedder,
            force=args.rebuild,
        )
        indexes[domain] = load_index(report.path)
        seconds = indexes[domain].manifest["build_seconds"]
        builds[domain] = (report.passages, seconds, "" if report.built else " (index reused; its build time)")
        qrels[domain] = load_qrels(data / "retrieval/mtrag" / domain / "qrels.tsv")
        for name in ("lastturn", "rewrite"):
            query_sets.setdefault(name, {})[domain] = read_queries(
                data / "retrieval/mtrag" / domain / f"{name}.jsonl"
            )
    if args.graph_rewrites:
        graph = read_queries(Path(args.graph_rewrites))
        query_sets["graph"] = {
            d: {q: graph[q] for q in query_sets["lastturn"][d] if q in graph} for d in DOMAINS
        }

    results, latencies = {}, {mode: [] for mode in MODES}
    for set_name, per_domain in query_sets.items():
        for mode in MODES:
            per_query, domain_of_query = {}, {}
            for domain in DOMAINS:
                run = {}
                for qid, text in per_domain[domain].items():
                    started = time.perf_counter()
                    hits = search(indexes[domain], text, top_k=10, mode=mode) if text else []
                    latencies[mode].append(time.perf_counter() - started)
                    run[qid] = {indexes[domain].ids[i]: score for i, score in hits}
                    domain_of_query[qid] = domain
                per_query.update(score_queries(run, qrels[domain], ks=(5,)))
            results[(mode, set_name)] = aggregate(per_query, domain_of_query)
            print(f"  done: {mode} / {set_name}", file=sys.stderr, flush=True)

    columns = [*DOMAINS, "all"]
    header = f"{'method':<8} {'queries':<9}" + "".join(
        f" {c + ' nDCG@5':>13} {c + ' R@5':>10}" for c in columns
    )
    print(f"\nTable 1. corpora/mini, embedder {args.embedder}: nDCG@5 / Recall@5 per domain")
    print(header)
    print("-" * len(header))
    for (mode, set_name), table in results.items():
        cells = "".join(
            f" {table[c]['nDCG@5']:>13.4f} {table[c]['Recall@5']:>10.4f}"
            if c in table
            else f" {'-':>13} {'-':>10}"
            for c in columns
        )
        print(f"{mode:<8} {set_name:<9}{cells}")
    counts = results[("hybrid", "lastturn")]
    print(
        "queries with qrels: " + ", ".join(f"{c} {int(counts[c]['queries'])}" for c in columns if c in counts)
    )
    print("index build (embedding + FAISS flat + BM25):")
    for domain, (passages, seconds, note) in builds.items():
        print(f"  {domain:<7} {passages:>5} passages {seconds:>7.1f}s {passages / seconds:>7.1f}/s{note}")
    passages, seconds = sum(b[0] for b in builds.values()), sum(b[1] for b in builds.values())
    print(f"  {'all':<7} {passages:>5} passages {seconds:>7.1f}s {passages / seconds:>7.1f}/s")
    print("query latency, one query at a time (hybrid includes embedding the query; dense reuses it):")
    for mode in MODES:
        ms = [1000 * s for s in latencies[mode]]
        p50, p95 = percentile(ms, 50), percentile(ms, 95)
        print(f"  {mode:<7} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  ({len(ms)} queries)")


def synthetic_vectors(n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    """Points around random cluster centres (real embeddings cluster; uniform noise is a worst case)."""
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        labels = rng.integers(0, len(centres), stop - start)
        block = centres[labels] + 0.5 * rng.standard_normal((stop - start, dim), dtype=np.float32) / np.sqrt(
            dim
        )
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def faiss_table(args: argparse.Namespace) -> None:
    import faiss

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((args.faiss_clusters, args.dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    started = time.perf_counter()
    vectors = synthetic_vectors(args.faiss_vectors, args.dim, rng, centres)
    queries = synthetic_vectors(args.faiss_queries, args.dim, rng, centres)
    print(f"  generated {len(vectors):,} vectors in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    rows, exact = [], None
    for kind in args.faiss_kinds:
        started = time.perf_counter()
        index, params = make_faiss_index(
            vectors, kind, nlist=args.nlist, hnsw_m=args.hnsw_m, ef_construction=args.hnsw_ef_construction
        )
        build = time.perf_counter() - started
        started = time.perf_counter()
        _, ids = index.search(queries, 10)
        query = time.perf_counter() - started
        if kind == "flat":
            exact = ids
        recall = (
            float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact, strict=True)]))
            if exact is not None
            else float("nan")
        )
        rows.append((kind, params, build, query, recall))
        print(f"  done: {kind} ({build:.1f}s build)", file=sys.stderr, flush=True)
        del index
    print(
        f"\nTable 2. FAISS on {args.faiss_vectors:,} synthetic {args.dim}-d vectors ({args.faiss_clusters} "
        f"clusters), {args.faiss_queries} queries in one batch, {faiss.omp_get_max_threads()} threads"
    )
    header = (
        f"{'index':<6} {'params':<40} {'build s':>9} {'vectors/s':>11} {'query ms/q':>11} {'recall@10':>10}"
    )
    print(header)
    print("-" * len(header))
    for kind, params, build, query, recall in rows:
        described = ", ".join(f"{k}={v}" for k, v in params.items()) or "exact"
        print(
            f"{kind:<6} {described:<40} {build:>9.1f} {args.faiss_vectors / build:>11.0f} "
            f"{1000 * query / args.faiss_queries:>11.3f} {recall:>10.4f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(settings.data_dir()))
    parser.add_argument("--index-dir", default=str(Path.home() / ".cache/mtrag-graph/bench-index"))
    parser.add_argument("--embedder", default=settings.embedder())
    parser.add_argument(
        "--graph-rewrites", metavar="FILE", help='the graph\'s rewrites, {"_id", "text"} lines'
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the mini indexes even if unchanged")
    parser.add_argument("--faiss-vectors", type=int, default=1_000_000)
    parser.add_argument("--faiss-queries", type=int, default=1000)
    parser.add_argument("--faiss-clusters", type=int, default=2000)
    parser.add_argument("--faiss-kinds", nargs="+", default=["flat", "ivf", "hnsw"])
    parser.add_argument("--nlist", type=int, default=1024, help="IVF lists")
    parser.add_argument("--hnsw-m", type=int, default=16, help="HNSW links a node")
    parser.add_argument("--hnsw-ef-construction", type=int, default=40)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--skip-mini", action="store_true")
    parser.add_argument("--skip-faiss", action="store_true")
    args = parser.parse_args()
    if "flat" in args.faiss_kinds:  # exact first: the others are measured against it
        args.faiss_kinds = ["flat", *[k for k in args.faiss_kinds if k != "flat"]]
    if not args.skip_mini:
        mini_table(args)
    if not args.skip_faiss:
        faiss_table(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
