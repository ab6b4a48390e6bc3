#!/usr/bin/env bash
# What the untrusted-bot tests (tests/hostile) need besides .venv: bubblewrap for the sandbox,
# util-linux's prlimit/setpriv for limits and user switching, and Debian's python3.11, which
# unprivileged bot users can run (the venv's interpreter may live in a folder only root reads).
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/python3.11 ] || missing+=(python3.11)
[ -x /usr/bin/python3 ] || missing+=(python3-minimal)
{ command -v prlimit >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; } || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -qq
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  }
fi
