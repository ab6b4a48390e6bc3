#!/usr/bin/env bash
# Install what the replay viewer's browser tests (tests/replay/test_browser.py) need:
#   - Chromium from Debian's packages (/usr/bin/chromium), and
#   - the Python `playwright` package in .venv, used only as a driver for that Chromium.
# `playwright install` is never run: it downloads browser builds of its own, which this
# project's machines cannot fetch. The tests launch /usr/bin/chromium directly.
# Idempotent: does nothing that is already done. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.65.2}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "setup_browser: need root to run: $*" >&2; return 1; fi
}

if [ ! -x "$CHROMIUM" ]; then
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
    as_root apt-get update -qq
    as_root apt-get install -y --no-install-recommends chromium fonts-dejavu-core >/dev/null
  fi
fi
# Fonts with the suit symbols, so screenshots show them (harmless if already present).
if ! fc-list 2>/dev/null | grep -qi dejavu; then
  as_root apt-get install -y --no-install-recommends fonts-dejavu-core >/dev/null 2>&1 || true
fi

if [ ! -x .venv/bin/python ]; then
  bash scripts/setup.sh test
fi
if ! .venv/bin/python -c "import playwright, sys; from importlib.metadata import version; sys.exit(version('playwright') != '$PLAYWRIGHT_VERSION')" 2>/dev/null; then
  .venv/bin/python -m pip install --quiet "playwright==$PLAYWRIGHT_VERSION"
fi

"$CHROMIUM" --version 2>/dev/null
.venv/bin/python -c "from importlib.metadata import version; print('playwright', version('playwright'))"
