"""The type checker runs, with the project's real configuration (pyproject.toml [tool.mypy]).

Each target is a set of command-line arguments added to that configuration: ``barbu``, the
SDK a bot author builds on, is checked strictly; ``arbiter`` with the configuration alone. Add a
target by adding a line to TARGETS.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TARGETS: dict[str, list[str]] = {
    "barbu": ["--strict", "sdk/python/barbu"],
    "arbiter": ["arbiter"],
}


def _mypy(name: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable, "-m", "mypy",
        "--config-file", str(ROOT / "pyproject.toml"),
        "--cache-dir", str(ROOT / ".mypy_cache" / name),  # one per target: targets run in parallel
        *args,
    ]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_mypy(name):
    proc = _mypy(name, TARGETS[name])
    assert proc.returncode == 0, f"mypy {' '.join(TARGETS[name])} found errors:\n{proc.stdout}{proc.stderr}"


def test_mypy_reports_a_type_error(tmp_path):
    """The check can fail: a wrong type in a file under the same configuration is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from barbu.rules import card_name\n\nname: int = card_name(3)\n")
    proc = _mypy("probe", ["--strict", str(bad)])
    assert proc.returncode == 1 and "Incompatible types in assignment" in proc.stdout, proc.stdout + proc.stderr
