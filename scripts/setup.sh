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
log=$(mktemp)
if ! .venv/bin/python -m pip install --quiet -e "$target" >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "setup.sh: installing the project ($target) failed; see pip's output above" >&2
  exit 1
fi
# pip's noise about the editable build, and setuptools' "Editable installation" warning block (from
# its first line to its closing `!!` and the source line quoted after it); everything else shows.
awk '
  /is ignored: it is neither a file nor a directory/ { next }
  /BuildBackendWarning: Editable installation\./ { block = 1; bangs = 0; next }
  block == 1 { if ($0 ~ /^[[:space:]]*!![[:space:]]*$/ && ++bangs == 2) block = 2; next }
  block == 2 { block = 0; if ($0 ~ /with strategy, WheelFile/) next }
  { print }
' "$log" || true
rm -f "$log"
.venv/bin/python -c "import arbiter, barbu, grpc, sqlmodel, trueskill, typer" # fails loudly if the install did
# Bots and commands start a fresh interpreter per process, often where bytecode cannot be written
# (read-only sandboxes, PYTHONDONTWRITEBYTECODE): compile the SDK and the arbiter once so each
# start only loads them.
.venv/bin/python -m compileall -q sdk/python/barbu arbiter >/dev/null
