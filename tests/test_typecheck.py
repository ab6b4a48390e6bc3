"""The type checker runs, with the project's real configuration (pyproject.toml [tool.mypy]).

Each target is the path of a package, checked by that configuration alone: strictly, both
``barbu`` (the SDK a bot author builds on) and ``arbiter``. Add a target by adding a line to TARGETS.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TARGETS: dict[str, list[str]] = {
    "barbu": ["sdk/python/barbu"],
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
    """The check can fail, and is strict by its configuration: a wrong type and a function
    without annotations, in a file under the same configuration, are both reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from barbu.rules import card_name\n\nname: int = card_name(3)\n\n\ndef untyped(x):\n    return x\n")
    proc = _mypy("probe", [str(bad)])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Incompatible types in assignment" in proc.stdout, proc.stdout
    assert "Function is missing a type annotation" in proc.stdout, proc.stdout
