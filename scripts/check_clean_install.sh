#!/usr/bin/env bash
# `pip install '.[serve]'` into a fresh virtual environment, then the served app imports: the package
# runs on the dependencies it declares, not on what a developer's .venv happens to hold.
#
# Each run starts from nothing (a temporary folder, removed after): torch's CPU build first (a plain
# `torch` would pull a CUDA build of several GB), llama-cpp-python built with scripts/setup.sh's flags
# (pip's wheel cache holds the build `make setup` made), then the package from the working tree's files
# (tracked and not ignored: never a stale build/ folder) and its serve extra. Installed, not editable,
# and imported from outside the checkout, so only the installed files answer the import.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRA=${EXTRA:-serve}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$SECONDS

git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' path; do [ -e "$path" ] && printf '%s\0' "$path"; done \
  | tar -c --null -T - | (mkdir "$work/source" && tar -x -C "$work/source")
"$PYTHON" -m venv "$work/venv"
pip() { "$work/venv/bin/python" -m pip "$@"; }
pip install -q --upgrade pip
pip install -q torch==2.13.0
CMAKE_ARGS="$(bash scripts/llama_cmake_args.sh)" pip install -q "llama-cpp-python>=0.3.2,<0.4"
pip install -q "$work/source[$EXTRA]"
pip check

cd "$work"
"$work/venv/bin/python" - <<'PY'
import importlib
import pkgutil

import mtrag_graph
import mtrag_graph.serve.app  # noqa: F401 - what `mtrag-graph serve` loads

assert mtrag_graph.__file__.startswith(__import__("sysconfig").get_paths()["purelib"]), mtrag_graph.__file__
# every module of the package: an optional library is imported where it is used, never at the top
names = [m.name for m in pkgutil.walk_packages(mtrag_graph.__path__, "mtrag_graph.")]
for name in names:
    importlib.import_module(name)
print(f"clean install: mtrag_graph.serve.app and all {len(names)} modules import")
PY
"$work/venv/bin/mtrag-graph" --help >/dev/null
"$work/venv/bin/python" -m pip list --format=freeze | grep -iE '^(langchain-core|langgraph|langchain-openai|fastapi|starlette)=='
echo "clean install checked in $((SECONDS - started)) s"
