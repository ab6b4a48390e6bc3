"""Benches that cannot rot: every script of ``bench/`` runs in its ``--quick`` mode (seconds) and
ends with its usual last line.

A bench is a script nothing imports, so a renamed method or a changed signature breaks it
silently; this runs each one as a subprocess of the project's Python, the way a reader would run
it, and checks the shape of the line its docstring promises. The figures of a quick run mean
nothing (too few samples, a loaded machine): only that the whole bench still runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
HELPERS = {"echo_bot.py"}  # run by match.py and remote.py, not a bench itself
SLOW = {"cluster.py", "arena.py"}  # whole systems started (a Dask cluster; PostgreSQL and `arbiter serve`)
SECONDS = 240  # a quick run takes seconds; this only turns a hang into a failure

N = r"[+-]?(?:\d+(?:\.\d+)?|inf)"  # a figure, as the benches print them
LAST_LINES = {
    "arena.py": rf"arena: recorder {N}/s at 0, {N}/s at \w+ stored; leaderboard p99 {N} ms = {N} x a trivial "
    rf"endpoint at \d+ clients; 2 API processes {N} x one",
    "cluster.py": rf"cluster: overhead {N} ms per match, {N} matches/min local vs {N} on the cluster",
    "engine.py": rf"engine: {N} playouts/s compiled = {N} x pure; {N} random matches/s compiled",
    "heuristic_vs_random.py": rf"heuristic_vs_random: margin {N} per match \(95% CI {N}\.\.{N}\), win rate {N}%, "
    rf"{N} ms per decision",
    "ladder.py": rf"ladder: sets to tau 0\.8 at N=16: arena >?{N} vs best other >?{N} \(ratio (?:{N}|n/a)\); "
    rf"tau at 5 sets/entrant N=32: {N} vs {N}",
    "margins_solve.py": rf"margins: solve {N} ms at N=\d+ \(table {N} ms\), a set's sums {N} us",
    "match.py": rf"match: {N} ms/match, {N} decisions/s, overhead {N} x bare stream \(pure {N} x\); "
    rf"league CPU {N} x bound \(pure {N} x\)",
    "ranking.py": rf"ranking: duplicate needs 1/{N} the matches of plain \(95% CI {N}\.\.{N}\)",
    "remote.py": rf"remote: {N} x local per decision \({N} ms vs {N} ms\), TLS handshake {N} ms",
    "replay_page.py": rf"replay page: built in {N} s, {N} MB, step median {N} ms \(p90 {N} ms\), 200 keys {N} s",
    "sampler.py": rf"sampler: {N} samples/s at the start, {N} in the middle, {N} at the end of a deal",
    "sprt.py": rf"sprt: alpha {N} \(nominal 0\.05\), beta {N} \(nominal 0\.05\), ASN {N} vs {N} theory",
    "strength.py": rf"strength: mc vs heuristic {N} per match \(95% CI {N}\.\.{N}\), {N} ms per decision; "
    rf"pure SDK {N} \(95% CI {N}\.\.{N}\), {N} ms",
    "tournament.py": rf"tournament: {N} matches/min at jobs=1, {N} at jobs=2, scaling {N}",
}


def test_every_bench_is_checked():
    """A new bench gets its line here, or this fails: none is left out of the suite."""
    scripts = {p.name for p in BENCH.glob("*.py")} - HELPERS
    assert scripts == set(LAST_LINES)


@pytest.mark.parametrize(
    "script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in sorted(LAST_LINES)]
)
def test_bench_runs_quick(script, tmp_path):
    try:
        run = subprocess.run(
            [sys.executable, str(BENCH / script), "--quick"],
            cwd=tmp_path,  # a bench writes nothing where it is run from
            capture_output=True,
            text=True,
            timeout=SECONDS,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{script} --quick ran over {SECONDS}s; its output so far:\n{e.stdout}\n{e.stderr}")
    output = f"stdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
    assert run.returncode == 0, output
    assert run.stdout.strip(), output
    last = run.stdout.strip().splitlines()[-1]
    assert re.fullmatch(LAST_LINES[script], last), f"last line {last!r} is not the bench's\n{output}"
    assert not list(tmp_path.iterdir()), f"{script} left files behind in its working folder"
