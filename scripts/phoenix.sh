#!/usr/bin/env bash
# Arize Phoenix, a local OpenTelemetry trace viewer, in an environment of its own (.venv-phoenix).
# The tracing test starts it as a server on loopback and reads the spans of a graph run back. It gets
# its own environment because its dependencies conflict with the project's (among them they require
# tenacity<9.2 and python-dateutil<3; ours has 9.2.1 and 4.0.0); it pulls no torch.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${PHOENIX_VENV:-.venv-phoenix}
PYTHON=${PYTHON:-python3}
PHOENIX_VERSION=20.26.1

if [ -x "$VENV/bin/phoenix" ] && "$VENV/bin/python" -m pip show arize-phoenix 2>/dev/null | grep -q "^Version: $PHOENIX_VERSION$"; then
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "arize-phoenix==$PHOENIX_VERSION"
echo "Phoenix $PHOENIX_VERSION: $VENV/bin/phoenix"
