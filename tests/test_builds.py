"""The compiled build and the pure one behave the same, byte for byte.

Each runs tests/build_probe.py in a process of its own (``BARBU_PURE=1`` and not): the logs of
random matches of every preset, random playouts, the sampler's deals, the verifier's reports on
the oracle logs; their digests must be equal. Where no compiled build exists (no C compiler),
both processes run the pure source and the test still checks that the switch says so.
CI (`.ci/run`) runs the whole suite under each build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from barbu.build import build_state

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "build_probe.py"


def probe_both(matches: int) -> tuple[list[str], list[str]]:
    """The probe's lines under the pure build and under the default one, run side by side."""
    runs = {
        pure: subprocess.Popen(
            [sys.executable, str(PROBE), str(matches)],
            env={**os.environ, "BARBU_PURE": pure},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for pure in ("1", "0")
    }
    out = {}
    for pure, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr
        out[pure] = stdout.splitlines()
    return out["1"], out["0"]


def check(matches: int) -> None:
    pure, default = probe_both(matches)
    assert pure[0].startswith("build: pure Python"), pure[0]
    if build_state() == "built":
        assert default[0].startswith("build: compiled"), default[0]
    else:
        assert default[0].startswith("build: pure Python"), default[0]
    assert len(pure) == 5
    assert pure[1:] == default[1:]


def test_both_builds_play_the_same_matches():
    check(100)


@pytest.mark.slow
def test_both_builds_play_the_same_thousand_matches():
    check(1000)


def test_the_pure_switch_is_installed_before_any_compiled_module(tmp_path):
    """``import arbiter`` alone (no barbu import first) under BARBU_PURE=1 loads no extension."""
    code = (
        "import sys, arbiter.transport.encode, barbu.rules.state, barbu.build as b; "
        "print(sorted(n for n, m in sys.modules.items() if n.split('.')[0] in ('barbu', 'arbiter') "
        "and b.loaded(m) == 'compiled'))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "BARBU_PURE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert run.stdout.strip() == "[]"
