#!/usr/bin/env bash
# Stop the vLLM server scripts/vllm_start.sh started (its whole process group: the API server and
# its engine process).
#
#   bash scripts/vllm_stop.sh        # the server on MTRAG_VLLM_PORT (8011)
#   bash scripts/vllm_stop.sh all    # both of scripts/vllm_start_default.sh (8011 and 8012)
set -euo pipefail
if [ "${1:-}" = all ]; then
  for port in 8011 8012; do MTRAG_VLLM_PORT=$port MTRAG_VLLM_PIDFILE= bash "$0"; done
  exit 0
fi
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
