#!/usr/bin/env bash
# Set up, then run the main job: play a match and verify its log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p logs
.venv/bin/arbiter selfplay --seed 1 --out logs/demo-selfplay.jsonl
.venv/bin/arbiter replay logs/demo-selfplay.jsonl --verify
