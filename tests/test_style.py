"""The linter and the formatter run, with the project's real configuration (pyproject.toml
[tool.ruff]): every Python file of the repository is lint-clean and formatted as ``ruff format``
writes it (the generated protobuf code excepted). Fix with ``.venv/bin/ruff format .``. And one
habit of the browser tests that ruff cannot see (their waits are functions)."""

from __future__ import annotations

import ast
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


def _bare_browser_waits(source: str) -> list[int]:
    """Lines where ``wait_for_function`` is given a bare expression rather than ``() => ...``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "wait_for_function" and node.args:
            first = node.args[0]
            head = first.values[0] if isinstance(first, ast.JoinedStr) and first.values else first
            if isinstance(head, ast.Constant) and not str(head.value).lstrip().startswith("() =>"):
                found.append(node.lineno)
    return found


def test_browser_waits_are_functions():
    """Playwright evaluates a bare expression with ``eval`` on every poll after the first, which
    the pages' Content-Security-Policy (``script-src 'self'``) refuses: such a wait passes only
    when the page is already there at the first look, and fails on a loaded machine."""
    bare = {
        f"{path.relative_to(ROOT)}:{line}"
        for path in (ROOT / "tests").rglob("*.py")
        for line in _bare_browser_waits(path.read_text(encoding="utf-8"))
    }
    assert not bare, f"write these waits as '() => ...': {sorted(bare)}"


def test_a_bare_browser_wait_is_found():
    assert _bare_browser_waits("page.wait_for_function(\"document.body.dataset.x === '1'\")") == [1]
    assert _bare_browser_waits('page.wait_for_function(f"() => x > {n}")') == []
