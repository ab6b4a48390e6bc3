"""A new format is one module and one registration: this file is that module for a small
Swiss-like format. Registered, a tournament file may name it; the loop plays it, growing it a
round at a time from the standings; the log folder knows its logs by its key pattern, so a
stopped run resumes; the standings rate its sets as duplicate sets. The formats that live above
the tournament layer (ab, arena) are found by name through the package's entry points."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from arbiter.errors import ConfigError, TournamentInterrupted
from arbiter.model import ScheduledMatch
from arbiter.tournament.config import parse_config
from arbiter.tournament.formats import Format, format_of, register
from arbiter.tournament.loop import Run, Schedule, run_tournament
from arbiter.tournament.schedule import derive_seed, rotations

from . import inproc

ROUNDS = 3


class Ladder(Schedule):
    """Each round, one table of the four best so far (by mean score, then name), in its four
    rotations on the same deals (a duplicate set); the next round is chosen once it is played."""

    def build(self) -> list[ScheduledMatch]:
        return self.round(0, sorted(self.config.entrant_names))

    def round(self, r: int, order: list[str]) -> list[ScheduledMatch]:
        seed, first = derive_seed(self.config.seed, "ladder", r), 4 * r
        return [
            ScheduledMatch(first + k, f"w{r + 1}-{k + 1}", r, 0, k, r, tuple(seats), seed, r)  # type: ignore[arg-type]
            for k, seats in enumerate(rotations(order[:4]))
        ]

    def grow(self, run: Run) -> list[ScheduledMatch]:
        played = len(self.matches) // 4
        if played >= ROUNDS or any(m.number not in run.records for m in self.matches):
            return []
        means = {s.name: s.mean_score for s in run.standings()}
        order = sorted(self.config.entrant_names, key=lambda n: (-(means.get(n) or 0.0), n))
        new = self.round(played, order)
        self.matches = [*self.matches, *new]
        return new


LADDER = register(
    Format(
        "ladder_test",
        r"w\d+-\d",
        True,
        lambda entrants, rounds: 4 * ROUNDS,
        lambda *args: [],
        in_files=True,
        schedule=Ladder,
    )
)


def config(tmp_path, fmt="ladder_test"):
    text = textwrap.dedent(f"""\
        name: t
        format: {fmt}
        entrants:
          - {{name: a, command: random}}
          - {{name: b, command: first}}
          - {{name: c, command: random}}
          - {{name: d, command: first}}
          - {{name: e, command: random}}
        rules: {{contracts: [barbu]}}
        log_folder: logs
        """)
    return parse_config(text, display="t.yaml", base_dir=tmp_path, check_commands=False)


def test_a_registered_format_is_named_in_a_file_played_grown_and_resumed(tmp_path):
    cfg = config(tmp_path)
    url = f"sqlite:///{tmp_path}/r.db"
    with pytest.raises(TournamentInterrupted):  # stopped in its first round (a real Swiss format takes
        # up its later rounds from the stored rows, as the arena's ladder does)
        run_tournament(cfg, database=url, executor=inproc.in_process(inproc.play_then_interrupt_at(2)))
    summary = run_tournament(cfg, database=url, executor=inproc.in_process())
    assert summary.complete and summary.played == 10 and summary.recorded_before == 2
    logs = sorted(p.name for p in (tmp_path / "logs").glob("t-*.jsonl"))
    assert logs == [f"t-w{r}-{k}.jsonl" for r in range(1, ROUNDS + 1) for k in range(1, 5)]
    assert {s.name for s in summary.standings} == set("abcde")
    assert all(s.duplicate_diff is not None for s in summary.standings if s.games)  # rated as duplicate sets


def test_an_unknown_format_is_refused_naming_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match="'swiss' is not a format; use one of .*round_robin.*ladder_test"):
        config(tmp_path, "swiss")


def test_formats_above_the_tournament_layer_are_found_by_name():
    """A fresh interpreter that imported neither: the entry points name where they live."""
    probe = (
        "import sys; from arbiter.tournament.formats import format_of; "
        "assert 'arbiter.arena.ladder' not in sys.modules; "
        "print(format_of('arena').key_pattern, format_of('ab').duplicate_sets)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == [r"\d+|a\d+-\d+", "False"]
    assert format_of("duplicate").duplicate_sets and not format_of("round_robin").duplicate_sets
