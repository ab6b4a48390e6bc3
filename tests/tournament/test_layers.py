"""The tournament layer's import rules (DESIGN.md "Layers"), checked with import-linter."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT

CONTRACTS = """
[importlinter]
root_packages =
    barbu
    arbiter
include_external_packages = True

[importlinter:contract:plain-values]
name = Storage, ratings and schedules consume plain values: never the referee, the match runner or gRPC
type = forbidden
source_modules =
    arbiter.storage
    arbiter.ratings
    arbiter.schedule
forbidden_modules =
    arbiter.referee
    arbiter.match
    arbiter.remote
    arbiter.launcher
    arbiter.tournament
    arbiter.tournament_cli
    grpc

[importlinter:contract:pure-schedule]
name = Schedules and ratings know nothing of storage
type = forbidden
source_modules =
    arbiter.schedule
    arbiter.ratings
forbidden_modules =
    arbiter.storage
    sqlalchemy
    sqlmodel
"""


def test_layers(tmp_path):
    config = tmp_path / "importlinter.ini"
    config.write_text(CONTRACTS)
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is part of the test extra"
    r = subprocess.run([lint, "--config", str(config)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
