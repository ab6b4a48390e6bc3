"""Golden matches: regenerating them must give the same bytes.

``standard-seed2026.jsonl`` and ``seed_de_fr-seed2026.jsonl`` were made with
``arbiter selfplay --seed 2026 [--rules seed_de_fr] --out ...``. Selfplay leaves the
wall-clock ``"ms"`` keys out (its players are deterministic and in-process), so the same seed
gives the same bytes.
``engine-standard-seed2026.jsonl`` is the same kind of match driven by the engine and
MatchLogWriter alone (``kit.play_random_match``), with no arbiter in between.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from barbu.matchlog import verify
from barbu.rules import make_ruleset

from ..rules.kit import DATA, play_random_match

GOLDEN = DATA / "golden"
ARBITER = str(Path(sys.executable).with_name("arbiter"))


def check_golden(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    assert '"ms":' not in text
    report = verify(text.splitlines(keepends=True))
    assert report.valid, f"line {report.line}: {report.error}"
    assert report.complete and report.deals == 28
    last = json.loads(text.splitlines()[-1])
    assert last["type"] == "match_end" and last["totals"] == report.totals and sum(report.totals) == 0
    return report.to_json()


@pytest.mark.parametrize("preset", ["standard", "seed_de_fr"])
def test_selfplay_golden_is_reproduced(preset, tmp_path):
    golden = GOLDEN / f"{preset}-seed2026.jsonl"
    expected = check_golden(golden)
    out = tmp_path / "m.jsonl"
    proc = subprocess.run(
        [ARBITER, "selfplay", "--seed", "2026", "--rules", preset, "--out", str(out), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["totals"], summary["places"]) == (expected["totals"], expected["places"])
    assert out.read_bytes() == golden.read_bytes()


def test_engine_golden_is_reproduced():
    golden = GOLDEN / "engine-standard-seed2026.jsonl"
    check_golden(golden)
    state, lines, _ = play_random_match(make_ruleset("standard"), 2026)
    assert "".join(line + "\n" for line in lines).encode() == golden.read_bytes()
