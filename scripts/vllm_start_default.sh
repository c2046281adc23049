#!/usr/bin/env bash
# The whole default pipeline's models on vLLM: the bundled 0.5B (the rewrite model) on port 8011 and the
# 1.5B (classify, gate, generate, clarify, judge) on port 8012, each a server of its own
# (scripts/vllm_start.sh); then `--preset vllm` (answer, chat, serve, bench) or
# `Context.from_preset("vllm")` runs the default pipeline on them:
#
#   bash scripts/vllm_start_default.sh
#   mtrag-graph answer TASKS -o OUT --preset vllm
#   bash scripts/vllm_stop.sh all
#
# Engine threads (environment): MTRAG_VLLM_SMALL_THREADS (1) and MTRAG_VLLM_LARGE_THREADS (2: the 1.5B
# takes most of the calls and most of the work). Each server holds its model in bf16 and a 2 GiB KV cache
# (MTRAG_VLLM_KV_GB); the memory measured: docs/serving.md.
set -euo pipefail
cd "$(dirname "$0")/.."
MTRAG_VLLM_MODEL=qwen2.5-coder-0.5b MTRAG_VLLM_PORT=8011 MTRAG_VLLM_THREADS=${MTRAG_VLLM_SMALL_THREADS:-1} \
  bash scripts/vllm_start.sh
MTRAG_VLLM_MODEL=qwen2.5-coder-1.5b MTRAG_VLLM_PORT=8012 MTRAG_VLLM_THREADS=${MTRAG_VLLM_LARGE_THREADS:-2} \
  bash scripts/vllm_start.sh
echo "the default pipeline on these: --preset vllm"
