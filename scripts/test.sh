#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test          # .venv with the project and its test tools
bash scripts/setup_postgres.sh      # PostgreSQL server binaries, for the storage tests
bash scripts/setup_browser.sh       # Debian's Chromium, for the replay viewer's browser tests
bash scripts/setup_node.sh          # the Node.js sample bot's npm packages
bash sample_bots/go/build.sh        # the Go sample bot: Debian's Go packages, built offline
bash sample_bots/java/build.sh      # the Java sample bot: Debian's OpenJDK and grpc-java, built offline
bash tests/cpp/build.sh             # the C++ recipe of docs/protocol.md: Debian's gRPC C++, built offline
bash scripts/setup_sandbox.sh       # bubblewrap, prlimit/setpriv, system python: untrusted-bot tests
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
