"""The linter and the formatter run, with the project's real configuration (pyproject.toml
[tool.ruff]): every Python file of the repository is lint-clean and formatted as ``ruff format``
writes it (the generated protobuf code excepted). Fix with ``.venv/bin/ruff format .``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ruff", *args, "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff(command):
    proc = _ruff(*command)
    assert proc.returncode == 0, f"ruff {' '.join(command)} found problems:\n{proc.stdout}{proc.stderr}"


def test_ruff_reports_a_problem(tmp_path):
    """The checks above can fail: an unused import and a badly formatted line are found."""
    (tmp_path / "bad.py").write_text("import os\nx = [1,2 ,3]\n", encoding="utf-8")
    assert _ruff("check", "bad.py", cwd=tmp_path).returncode == 1
    assert _ruff("format", "--check", "bad.py", cwd=tmp_path).returncode == 1
