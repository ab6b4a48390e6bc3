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
# The hot modules compiled with mypyc (docs/speed.md) where a C compiler and Python's headers are
# found; the pure Python source otherwise, and wherever the build fails. One line says which runs.
log=$(mktemp)
cc=${CC:-cc}
headers=$(.venv/bin/python -c 'import os, sysconfig; print(os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))')
built=$(.venv/bin/python -c 'import barbu.build as b; print(all(b.group_state(g) == "built" for g in ("barbu", "arbiter")))')
pure() {  # no compiled module left behind: the line says what runs
  .venv/bin/python scripts/build_compiled.py --clean >/dev/null
  echo "setup.sh: build: pure Python ($1)"
}
if ! command -v "$cc" >/dev/null 2>&1; then
  pure "no C compiler; install gcc and python3-dev for the compiled build"
elif [ "$headers" != True ]; then
  pure "no Python headers; install python3-dev for the compiled build"
elif [ "$built" = True ]; then
  echo "setup.sh: build: $(.venv/bin/python -c 'import barbu.build; print(barbu.build.describe())'), up to date"
elif ! .venv/bin/python -c "import mypyc" 2>/dev/null && ! .venv/bin/python -m pip install --quiet -e ".[compile]" >"$log" 2>&1; then
  pure "could not install mypyc: $(tail -n 1 "$log")"
elif CC="$cc" .venv/bin/python scripts/build_compiled.py >"$log" 2>&1; then
  echo "setup.sh: build: $(.venv/bin/python -c 'import barbu.build; print(barbu.build.describe())')"
else
  tail -n 20 "$log" >&2
  pure "the compiled build failed; its output above"
fi
rm -f "$log"
# Bots and commands start a fresh interpreter per process, often where bytecode cannot be written
# (read-only sandboxes, PYTHONDONTWRITEBYTECODE): compile the SDK and the arbiter once so each
# start only loads them.
.venv/bin/python -m compileall -q sdk/python/barbu arbiter >/dev/null
