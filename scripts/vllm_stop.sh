#!/usr/bin/env bash
# Stop the vLLM server scripts/vllm_start.sh started (its whole process group: the API server and
# its engine process).
set -euo pipefail
port=${MTRAG_VLLM_PORT:-8011}
pidfile=${MTRAG_VLLM_PIDFILE:-/tmp/mtrag-vllm-$port.pid}
if [ ! -f "$pidfile" ]; then
  echo "not running (no $pidfile)"
  exit 0
fi
pid=$(cat "$pidfile")
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
fi
rm -f "$pidfile"
echo "stopped (pid $pid)"
