#!/usr/bin/env bash
# Create .venv and install the project (editable) with the given extras, e.g. `setup.sh test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=${1:-}
target="."
[ -n "$extras" ] && target=".[$extras]"
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e "$target" 2>&1 | grep -v "is ignored: it is neither a file nor a directory" || true
.venv/bin/python -c "import arbiter, barbu, grpc, sqlmodel, trueskill, typer" # fails loudly if the install did
# Bots and commands start a fresh interpreter per process, often where bytecode cannot be written
# (read-only sandboxes, PYTHONDONTWRITEBYTECODE): compile the SDK and the arbiter once so each
# start only loads them.
.venv/bin/python -m compileall -q sdk/python/barbu arbiter >/dev/null
