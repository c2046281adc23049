#!/usr/bin/env bash
# Start vLLM's OpenAI-compatible server on loopback, serving one bundled model (scripts/vllm_setup.sh
# first), in the background; returns once it answers, and prints the model spec to use:
#
#   bash scripts/vllm_start.sh                # vllm:qwen2.5-coder-0.5b@http://127.0.0.1:8011/v1
#   MTRAG_VLLM_MODEL=qwen2.5-coder-1.5b bash scripts/vllm_start.sh   # ...-1.5b@http://127.0.0.1:8012/v1
#   bash scripts/vllm_stop.sh                 # (MTRAG_VLLM_PORT=8012 for the 1.5B's)
#
# Both, for the whole default pipeline on vLLM (the `vllm` preset): scripts/vllm_start_default.sh.
#
# Settings (environment): MTRAG_VLLM_MODEL (qwen2.5-coder-0.5b or qwen2.5-coder-1.5b), MTRAG_VLLM_PORT
# (8011 for the 0.5B, 8012 for the 1.5B), MTRAG_VLLM_THREADS (CPU threads of the engine: 1, so
# the client and the rest of a 2-core machine keep a core), MTRAG_VLLM_KV_GB (KV cache, GiB: 2; the
# 0.5B needs 12 KiB a token, so 2 GiB hold about 170,000 tokens; the 1.5B 28 KiB, about 75,000),
# MTRAG_VLLM_MAX_SEQS (sequences per step: 16), MTRAG_N_CTX (the longest prompt plus reply: 8192),
# MTRAG_VLLM_LOG / MTRAG_VLLM_PIDFILE,
# MTRAG_VLLM_DEV_MODE=1 (vLLM's development routes, POST /reset_prefix_cache among them, which
# benchmarks.throughput calls between levels; they also let any local process drive the engine).
set -euo pipefail
cd "$(dirname "$0")/.."
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
name=${MTRAG_VLLM_MODEL:-qwen2.5-coder-0.5b}
case $name in
  qwen2.5-coder-0.5b) default_port=8011 ;;
  qwen2.5-coder-1.5b) default_port=8012 ;;
  *) echo "MTRAG_VLLM_MODEL=$name: use qwen2.5-coder-0.5b or qwen2.5-coder-1.5b" >&2; exit 2 ;;
esac
port=${MTRAG_VLLM_PORT:-$default_port}
threads=${MTRAG_VLLM_THREADS:-1}
pidfile=${MTRAG_VLLM_PIDFILE:-/tmp/mtrag-vllm-$port.pid}
log=${MTRAG_VLLM_LOG:-/tmp/mtrag-vllm-$port.log}
base="http://127.0.0.1:$port/v1"

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "already running (pid $(cat "$pidfile")): vllm:$name@$base"
  exit 0
fi
# the folder scripts/vllm_setup.sh made (mtrag_graph.settings.graph_cache)
model_dir=${MTRAG_GRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mtrag-graph}/vllm/$name-instruct
[ -f "$model_dir/config.json" ] || { echo "no model at $model_dir: run scripts/vllm_setup.sh" >&2; exit 1; }

# the allocator and the OpenMP runtime vLLM's CPU kernels are built against
preload=$(ls /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 2>/dev/null || true)
iomp=$(ls "$VLLM_VENV"/lib/libiomp5.so 2>/dev/null || true)
export LD_PRELOAD="${preload:+$preload:}${iomp}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export VLLM_CPU_KVCACHE_SPACE=${MTRAG_VLLM_KV_GB:-2}
export VLLM_CPU_OMP_THREADS_BIND=nobind OMP_NUM_THREADS=$threads VLLM_CPU_NUM_OF_RESERVED_CPU=0
export VLLM_TARGET_DEVICE=cpu
if [ "${MTRAG_VLLM_DEV_MODE:-0}" = 1 ]; then export VLLM_SERVER_DEV_MODE=1; fi

# the server must not keep a descriptor this script inherited: under `flock FILE scripts/vllm_start.sh`
# it would hold the lock for as long as it runs
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done
# setsid: the server and its engine process form one process group, which vllm_stop.sh ends
setsid "$VLLM_VENV/bin/python" -m vllm.entrypoints.openai.api_server \
  --model "$model_dir" --served-model-name "$name" \
  --host 127.0.0.1 --port "$port" \
  --dtype bfloat16 --max-model-len "${MTRAG_N_CTX:-8192}" \
  --max-num-seqs "${MTRAG_VLLM_MAX_SEQS:-16}" \
  --enforce-eager --generation-config vllm \
  >"$log" 2>&1 < /dev/null &
echo $! >"$pidfile"
started=$SECONDS
until curl -sf "$base/models" >/dev/null; do
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "vLLM exited; the end of $log:" >&2
    tail -30 "$log" >&2
    rm -f "$pidfile"
    exit 1
  fi
  if (( SECONDS - started > ${MTRAG_VLLM_START_TIMEOUT:-400} )); then
    echo "vLLM did not answer within ${MTRAG_VLLM_START_TIMEOUT:-400} s; the end of $log:" >&2
    tail -30 "$log" >&2
    bash scripts/vllm_stop.sh
    exit 1
  fi
  sleep 1
done
echo "vLLM up in $((SECONDS - started)) s (pid $(cat "$pidfile"), log $log): vllm:$name@$base"
