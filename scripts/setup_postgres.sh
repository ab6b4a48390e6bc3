#!/usr/bin/env bash
# Make sure the PostgreSQL server binaries (initdb, pg_ctl) are on this machine: the storage
# tests start a throwaway server with them. Installs Debian's postgresql package if missing.
set -euo pipefail
have() { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if ! have || ! id postgres >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1 || {
    apt-get update -qq
    apt-get install -y --no-install-recommends postgresql >/dev/null
  }
fi
have || { echo "setup_postgres: initdb still missing after installing postgresql" >&2; exit 1; }
