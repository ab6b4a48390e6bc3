#!/usr/bin/env bash
# Install the Node.js sample bot's dependencies (@grpc/grpc-js, @grpc/proto-loader) into
# sample_bots/node/node_modules, exactly as sample_bots/node/package-lock.json pins them.
#
# Idempotent: when node_modules was installed from the current package.json and lock file, it
# does nothing (no network). Otherwise it runs `npm ci --prefix sample_bots/node`. Installs
# Debian's nodejs and npm when either is missing (needs root or sudo); fails loudly (exit 1, one
# line on stderr) when that fails or Node.js is too old.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=sample_bots/node
stamp=$dir/node_modules/.barbu-installed   # the checksum of the files it was installed from

fail() { echo "setup_node.sh: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else return 1; fi
}
apt_install() {  # Debian's package, or NodeSource's nodejs (which brings npm) where that is configured
  echo "setup_node.sh: apt-get install $*" >&2
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 || {
    as_root apt-get update -qq && as_root apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1
  }
}

command -v node >/dev/null 2>&1 || apt_install nodejs || true
command -v npm >/dev/null 2>&1 || apt_install npm || true
command -v node >/dev/null 2>&1 || fail "node is not installed: install Node.js 18 or later (e.g. apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || fail "npm is not installed: install it with Node.js (e.g. apt-get install npm)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || fail "Node.js $(node --version) is too old: the bot needs 18 or later"
[ -f "$dir/package-lock.json" ] || fail "$dir/package-lock.json is missing"

want=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && (cd "$dir" && node -e 'require.resolve("@grpc/grpc-js"); require.resolve("@grpc/proto-loader")') >/dev/null 2>&1; then
  exit 0  # up to date
fi
echo "setup_node.sh: npm ci --prefix $dir" >&2
npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2 || fail "npm ci failed in $dir (is the npm registry reachable?)"
(cd "$dir" && node -e 'require("@grpc/grpc-js"); require("@grpc/proto-loader")') || fail "the installed modules do not load"
echo "$want" > "$stamp"
