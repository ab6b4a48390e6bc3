#!/usr/bin/env bash
# Set up, then run the main job: the demo league of the sample bots (SQLite, local bots).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/arbiter run tournaments/league.yaml   # prints the standings at the end (again: arbiter standings)
