"""The standings kept as data, match by match, end where a replay of the whole history ends.

A duplicate tournament with copies and a forfeiting entrant is killed once right after a match's
log was written (recorded from the log by the resume) and resumed; an arena ladder with aborted
matches, faults, a retirement and a kill is resumed too. Each time the table the recorder kept
is compared with ``arbiter standings --rebuild``'s replay of the stored matches (floats within
1e-9) and with the standings computed from the matches as before there was a table.
"""

from __future__ import annotations

import dataclasses
import math
import random
import sys
from datetime import datetime
from pathlib import Path

import pytest
from barbu.loglines import FaultKind
from barbu.matchlog import FaultRecord, MatchResult, MatchStatus

from arbiter.arena.config import load_arena
from arbiter.arena.ladder import ArenaSchedule
from arbiter.arena.serve import field_of
from arbiter.errors import TournamentInterrupted
from arbiter.model import MatchOutcome, MatchTask, ScheduledMatch, Tally
from arbiter.storage import Repo, open_database, row_id
from arbiter.storage.arena import ArenaStore
from arbiter.tournament.formats import plays_duplicate_sets
from arbiter.tournament.kept import kept_standings, rebuild_standings
from arbiter.tournament.loop import Run, run_tournament
from arbiter.tournament.ratings import standings

from . import inproc
from .conftest import ROOT
from .test_runner import config

PY = sys.executable


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'r.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def flat(value: object, path: str = "") -> list[tuple[str, object]]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [x for f in dataclasses.fields(value) for x in flat(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [("{path}:keys", sorted(value))] + [x for k in sorted(value) for x in flat(value[k], f"{path}[{k}]")]
    if isinstance(value, tuple | list):
        return [(f"{path}:len", len(value))] + [x for i, v in enumerate(value) for x in flat(v, f"{path}[{i}]")]
    return [(path, value)]


def assert_same(kept: dict[str, Tally], replayed: dict[str, Tally]) -> None:
    assert sorted(kept) == sorted(replayed)
    for name in kept:
        for (path, a), (other, b) in zip(flat(kept[name]), flat(replayed[name]), strict=True):
            assert path == other
            if isinstance(a, float) or isinstance(b, float):
                assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (name, path, a, b)
            else:
                assert a == b, (name, path, a, b)


def tallies(url: str, name: str) -> dict[str, Tally]:
    engine = open_database(url)
    try:
        repo = Repo(engine)
        mark, out = repo.standings(row_id(repo.require_tournament(name)))
        assert mark is not None
        return out
    finally:
        engine.dispose()


def check_kept_equals_replay(url: str, name: str) -> dict[str, Tally]:
    """The kept table, the rebuilt one and the standings from the matches alike; the kept one."""
    kept = tallies(url, name)
    engine = open_database(url)
    try:
        repo = Repo(engine)
        t = repo.require_tournament(name)
        t_id = row_id(t)
        before = kept_standings(repo, t)
        assert before.kept and before.recorded == repo.count_matches(t_id)
        old = standings(repo.entrant_names(t_id), repo.matches(t_id), plays_duplicate_sets(t.format))
        rebuilt = rebuild_standings(engine, t)
    finally:
        engine.dispose()
    assert_same(kept, tallies(url, name))  # what the rebuild stored
    for a, b in zip(before.rows, old, strict=True):
        for x, y in zip(flat(dataclasses.replace(a, scores=[])), flat(dataclasses.replace(b, scores=[])), strict=True):
            if isinstance(x[1], float):
                assert math.isclose(x[1], y[1], rel_tol=1e-9, abs_tol=1e-9), (a.name, x, y)
            else:
                assert x == y, (a.name, x, y)
    assert [r.name for r in rebuilt.rows] == [r.name for r in before.rows]
    # the margin ratings solved from the sums kept set by set are the rebuilt ones
    rebuilt_margins = {r.name: (r.margin, r.margin_sd) for r in rebuilt.rows}
    for row in before.rows:
        margin, sd = rebuilt_margins[row.name]
        assert math.isclose(row.margin, margin, rel_tol=1e-9, abs_tol=1e-9), (row.name, row.margin, margin)
        assert (sd is None) == (row.margin_sd is None)
        assert sd is None or math.isclose(row.margin_sd, sd, rel_tol=1e-9, abs_tol=1e-9), (row.name, sd)
    assert all(t.margin.sets == t.games for t in kept.values())
    return kept


def play_then_die_at(number: int) -> inproc.PlayFunction:
    """Plays every match; at match ``number`` dies right after its log is written (as a kill
    between the worker's rename and the recorder's commit would)."""

    def play(task: MatchTask) -> MatchOutcome:
        outcome = inproc.play_inprocess(task)
        if task.number == number:
            raise KeyboardInterrupt
        return outcome

    return play


def test_a_duplicate_tournament_killed_and_resumed_keeps_what_a_replay_gives(tmp_path, url):
    entrants = {"a": "random", "b": "first", "c": "forfeit"}  # three: copies fill the tables
    cfg = config(tmp_path, entrants, extra="format: duplicate\nrounds: 2\n")
    with pytest.raises(TournamentInterrupted):
        run_tournament(cfg, database=url, executor=inproc.in_process(play_then_die_at(9)))
    partial = tallies(url, "t")
    assert partial and all(t.games <= 2 for t in partial.values())  # the sets before the kill
    summary = run_tournament(cfg, database=url, executor=inproc.in_process(inproc.play_inprocess))
    assert summary.complete and summary.reconciled == 1
    kept = check_kept_equals_replay(url, "t")
    assert kept["c"].faults > 0 and kept["c"].forfeits > 0 and kept["a"].forfeits == 0
    assert kept["a"].games == kept["b"].games == 6 and len(kept["a"].trend) == 6
    assert kept["a"].analysed == kept["a"].score.n > 0 and kept["a"].contracts["barbu"].n > 0
    assert kept["a"].duplicate.n == 6
    assert kept["a"].margin.sets == 6 and kept["a"].margin.met["b"] > 0 and kept["a"].margin.squares > 0
    assert isinstance(kept["a"].last_played, datetime)
    # the summary's table is the kept one
    assert {s.name: (s.mu, s.sigma, s.matches) for s in summary.standings} == {
        n: (t.mu, t.sigma, t.score.n) for n, t in kept.items()
    }


# ---- an arena's ladder ---------------------------------------------------------------------------
def write_arena(folder: Path, entrants: int) -> Path:
    lines = [f"  - {{name: bot{i}, command: {PY} {ROOT}/sample_bots/random_bot.py}}" for i in range(entrants)]
    text = f"""name: ladder
entrants:
{chr(10).join(lines)}
rules: {{preset: standard}}
web: 127.0.0.1:0
parallelism: 2
database: {folder}/arena.db
log_folder: {folder}/matches
store: {folder}/bundles
"""
    path = folder / "arena.yaml"
    path.write_text(text)
    return path


def synthetic(die_at: int | None = None):
    """A made-up outcome at once: random totals, now and then an aborted match or a fault and a
    forfeit; ``die_at``: that match is never recorded (the run is killed while it plays)."""

    def play(task: MatchTask) -> MatchOutcome:
        if task.number == die_at:
            raise KeyboardInterrupt
        rng = random.Random(task.seed * 7 + task.number)
        totals = [rng.randrange(-300, 300) for _ in range(3)]
        totals.append(-sum(totals))
        order = sorted(range(4), key=lambda s: -totals[s])
        places = tuple(order.index(s) + 1 for s in range(4))
        status = MatchStatus.ABORTED if rng.random() < 0.08 else MatchStatus.COMPLETE
        faults, forfeits = (), ()
        if rng.random() < 0.2:
            seat = rng.randrange(4)
            faults = (FaultRecord(3, seat, FaultKind.TIMEOUT, "slow", "forfeit"),)
            forfeits = (seat,)
        result = MatchResult(status, tuple(totals), places, faults, forfeits, deals=28, decisions=1000)
        return MatchOutcome(task.number, result, task.log_path, "0" * 64)

    return play


class Retire:
    """Retires ``name`` once ``after`` matches are recorded; drains after ``stop``."""

    def __init__(self, schedule: ArenaSchedule, retired: set[str], name: str, after: int, stop: int):
        self.schedule, self.retired, self.name, self.after, self.stop = schedule, retired, name, after, stop

    def started(self, run: Run) -> None:
        pass

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        if len(run.records) >= self.after:
            self.retired.add(self.name)
        if run.played >= self.stop:
            self.schedule.drain()

    def stopped(self, run: Run) -> None:
        pass


def ladder(arena_file: Path, url: str, retired: set[str], die_at: int | None, stop: int) -> None:
    arena = load_arena(arena_file)
    engine = open_database(url)
    try:
        field, lookup = field_of(arena, ArenaStore(engine))
    finally:
        engine.dispose()

    def active():
        return [e for e in field() if e.entrant.name not in retired]

    schedule = ArenaSchedule(arena.tournament, arena.matchmaking, arena.seed, active, lookup)
    observer = Retire(schedule, retired, "bot2@1", 40, stop)
    run_tournament(
        schedule.config, database=url, executor=inproc.in_process(synthetic(die_at)), observers=[observer],
        schedule=schedule,
    )  # fmt: skip


def test_an_arena_ladder_killed_and_resumed_keeps_what_a_replay_gives(tmp_path):
    arena_file = write_arena(tmp_path, 7)
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    retired: set[str] = set()
    with pytest.raises(TournamentInterrupted):
        ladder(arena_file, url, retired, die_at=62, stop=1000)
    ladder(arena_file, url, retired, die_at=None, stop=300)
    kept = check_kept_equals_replay(url, "ladder")
    assert "bot2@1" in kept and sum(t.score.n for t in kept.values()) > 0
    assert sum(t.forfeits for t in kept.values()) > 0 and sum(t.faults for t in kept.values()) > 0
    assert max(len(t.trend) for t in kept.values()) == 40  # bounded
