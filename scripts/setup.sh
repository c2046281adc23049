#!/usr/bin/env bash
# Create .venv and install mtrag-graph with everything it needs, offline models included.
# Order matters: torch first (the local CPU build; otherwise pip pulls CUDA wheels), then
# llama-cpp-python built with flags that avoid the AMX code path that segfaults on these CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip "$@"; }
pip install -q --upgrade pip

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  pip install torch==2.13.0
fi

if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo "building llama-cpp-python (3-6 minutes the first time; pip caches the wheel)"
  CMAKE_ARGS="$(bash scripts/llama_cmake_args.sh)" pip install "llama-cpp-python>=0.3.2,<0.4"
fi

# measure: the evaluation side (BERTScore, ROUGE, pytrec_eval, plots, scikit-learn); flag: FlagEmbedding,
# for the `cross-encoder` reranker; a serving install can leave them out: pip install -e ".[models]"
pip install -q -e ".[models,measure,flag,dev]"
# the trace viewer the tracing test starts (its own environment: its dependencies conflict with ours)
bash scripts/phoenix.sh || echo "Phoenix could not be installed: the Phoenix tracing test will skip"
# the served page's browser test (tests/serve/test_browser.py) drives Debian's chromium through its driver
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
      || echo "chromium could not be installed: the browser test will fail (MTRAG_SKIP_BROWSER=1 leaves it out)"
  else
    echo "chromium and chromium-driver are missing (not root, or no apt-get): install them, or the browser test" \
      "fails (MTRAG_SKIP_BROWSER=1 leaves it out)"
  fi
fi
# the chat UI's browser test (tests/serve/test_chat_ui.py) builds examples/chat_ui from the npm registry
if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) \
    || echo "npm could not be installed: the chat UI test will fail (MTRAG_SKIP_BROWSER=1 leaves it out)"
fi
if command -v npm >/dev/null; then
  (cd examples/chat_ui && npm ci --no-audit --no-fund && npm run build) >/dev/null \
    || echo "the chat UI page could not be built: tests/serve/test_chat_ui.py builds it again"
fi
touch "$VENV/.mtrag-setup-done"
echo "setup done: $VENV"
