#!/usr/bin/env bash
# Retrieval quality of the two index backends on the MTRAG mini corpora, through the commands users run:
# `index` (FAISS + bm25s, then Milvus Lite), `retrieve` (hybrid, the organisers' rewrites), `eval-retrieval`.
#   benchmarks/backend_quality.sh [DATA_DIR] [WORK_DIR]
set -euo pipefail
DATA=${1:-../shared/data/mtrag}
WORK=${2:-runs/backend_quality}
PY=${PYTHON:-python}
mkdir -p "$WORK"
$PY -m mtrag_graph index "$DATA"/corpora/mini/*.jsonl -o "$WORK/faiss" --quiet
$PY -m mtrag_graph index "$DATA"/corpora/mini/*.jsonl -o "$WORK/milvus" --backend milvus --quiet
for backend in faiss milvus; do
  qrels=()
  : > "$WORK/$backend.run.jsonl"
  for domain in clapnq cloud fiqa govt; do
    $PY -m mtrag_graph retrieve "$DATA/retrieval/mtrag/$domain/rewrite.jsonl" --index "$WORK/$backend" \
      --domain "$domain" --top 10 -o "$WORK/$backend.$domain.jsonl" > /dev/null 2>&1
    cat "$WORK/$backend.$domain.jsonl" >> "$WORK/$backend.run.jsonl"
    qrels+=(--qrels "$DATA/retrieval/mtrag/$domain/qrels.tsv")
  done
  echo "== $backend"
  $PY -m mtrag_graph eval-retrieval "$WORK/$backend.run.jsonl" "${qrels[@]}" --json "$WORK/$backend.json"
done
