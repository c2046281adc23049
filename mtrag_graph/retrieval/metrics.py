"""Retrieval metrics (Task A): nDCG@k and Recall@k through pytrec_eval, per domain and overall.

Qrels are binary (a score above 0 is relevant). Queries without relevant passages are ignored; a query
in the run with no passages scores 0. The overall row is the mean over all queries, i.e. the domain
means weighted by their query counts. Query ids match across the ``<::>`` and ``::`` spellings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mtrag_graph.retrieval.corpus import domain_of_path
from mtrag_graph.tasks import domain_of, read_jsonl

KS = (1, 3, 5, 10)
OVERALL = "all"


def metric_names(ks: Iterable[int] = KS) -> list[str]:
    ks = list(ks)
    return [f"nDCG@{k}" for k in ks] + [f"Recall@{k}" for k in ks]


def normalise_qid(qid: Any) -> str:
    return str(qid).strip().replace("<::>", "::")


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """``query-id corpus-id score`` lines (tab or space separated, optional header) as binary qrels."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields or (number == 1 and fields[0].lower() in ("query-id", "query_id", "qid")):
                continue
            if len(fields) < 3:
                raise ValueError(f"{path}: line {number}: expected 'query-id corpus-id score'")
            qid, doc, score = normalise_qid(fields[0]), fields[1], float(fields[-1])
            qrels.setdefault(qid, {})[doc] = 1 if score > 0 else 0
    return qrels


def read_run(path: str | Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """A run in the benchmark's format: ``{"task_id", "Collection", "contexts": [{"document_id", "score"}]}``.

    Returns the scores per query and each query's collection (when given). ``_id`` is accepted for
    ``task_id``. Raises ValueError naming the line of a malformed row.
    """
    run: dict[str, dict[str, float]] = {}
    collections: dict[str, str] = {}
    for line, row, error in read_jsonl(path):
        if error is not None or not isinstance(row, dict):
            raise ValueError(f"{path}: line {line}: {error or 'expected a JSON object'}")
        qid = row.get("task_id", row.get("_id"))
        contexts = row.get("contexts")
        if qid is None or not isinstance(contexts, list):
            raise ValueError(f"{path}: line {line}: needs 'task_id' and a 'contexts' list")
        qid = normalise_qid(qid)
        scores = run.setdefault(qid, {})
        for rank, ctx in enumerate(contexts):
            if not isinstance(ctx, dict) or "document_id" not in ctx:
                raise ValueError(f"{path}: line {line}: contexts[{rank}] has no 'document_id'")
            score = ctx.get("score")
            doc = str(ctx["document_id"])
            # without scores, rank order decides
            scores[doc] = max(scores.get(doc, float("-inf")), float(score) if score is not None else -rank)
        collection = row.get("Collection", row.get("collection"))
        if isinstance(collection, str):
            collections[qid] = collection
    return run, collections


def score_queries(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]], ks: Iterable[int] = KS
) -> dict[str, dict[str, float]]:
    """Per-query metrics for the queries of ``run`` that have at least one relevant passage."""
    import pytrec_eval  # noqa: PLC0415 - measure extra (pytrec-eval): loaded when retrieval is scored

    ks = list(ks)
    names = metric_names(ks)
    judged = {q: dict(r) for q, r in qrels.items() if any(v > 0 for v in r.values())}
    queries = [q for q in run if q in judged]
    scored = {q: {d: float(s) for d, s in run[q].items()} for q in queries if run[q]}
    measures = {"ndcg_cut." + ",".join(map(str, ks)), "recall." + ",".join(map(str, ks))}
    raw = (
        pytrec_eval.RelevanceEvaluator({q: judged[q] for q in scored}, measures).evaluate(scored)
        if scored
        else {}
    )
    results: dict[str, dict[str, float]] = {}
    for q in queries:
        values = raw.get(q, {})
        row = [values.get(f"ndcg_cut_{k}", 0.0) for k in ks] + [values.get(f"recall_{k}", 0.0) for k in ks]
        results[q] = dict(zip(names, row, strict=True))
    return results


def aggregate(
    per_query: Mapping[str, Mapping[str, float]], domains: Mapping[str, str | None]
) -> dict[str, dict[str, float]]:
    """Mean metrics per domain and over all queries (``all``), with ``queries`` counts."""
    groups: dict[str, list[str]] = {}
    for q in per_query:
        groups.setdefault(domains.get(q) or "unknown", []).append(q)
    table: dict[str, dict[str, float]] = {}
    for name, queries in [*sorted(groups.items()), (OVERALL, list(per_query))]:
        if not queries:
            continue
        metrics = per_query[queries[0]].keys()
        table[name] = {m: sum(per_query[q][m] for q in queries) / len(queries) for m in metrics}
        table[name]["queries"] = len(queries)
    return table


def evaluate_files(run_path: str | Path, qrels_paths: Iterable[str | Path], ks: Iterable[int] = KS):
    """Per-domain and overall metrics of a run file against one or more qrels files."""
    run, collections = read_run(run_path)
    qrels: dict[str, dict[str, int]] = {}
    domains: dict[str, str | None] = {}
    for path in qrels_paths:
        file_domain = domain_of_path(path)
        for qid, judged in load_qrels(path).items():
            qrels.setdefault(qid, {}).update(judged)
            domains[qid] = file_domain or domain_of(collections.get(qid))
    for qid, collection in collections.items():
        domains[qid] = domains.get(qid) or domain_of(collection)
    return aggregate(score_queries(run, qrels, ks), domains)


def format_table(table: Mapping[str, Mapping[str, float]], names: list[str] | None = None) -> str:
    names = names or [n for n in next(iter(table.values()), {}) if n != "queries"]
    header = f"{'domain':<8} {'queries':>7} " + " ".join(f"{n:>9}" for n in names)
    lines = [header, "-" * len(header)]
    for domain, row in table.items():
        lines.append(f"{domain:<8} {int(row['queries']):>7} " + " ".join(f"{row[n]:>9.4f}" for n in names))
    return "\n".join(lines)
