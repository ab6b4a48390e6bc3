"""The ladder as a schedule of the tournament loop (in-process players, a real SQLite file): it
grows as the loop has room, waits when the field is too small, takes in versions as they become
active, drains, and a restart takes up a set that a stop cut short."""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import replace

from arbiter.arena.ladder import ArenaSchedule, LadderEntrant, versioned
from arbiter.arena.matchmaking import Matchmaking
from arbiter.storage import Repo, open_database
from arbiter.tournament.config import EntrantConfig, parse_config
from arbiter.tournament.loop import Observer, run_tournament
from arbiter.tournament.ratings import standings

from ..tournament import inproc
from ..tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures used here

BASE = """
name: ladder
entrants:
  - {name: x, command: random}
  - {name: y, command: random}
rules: {contracts: [barbu]}
log_folder: logs
"""


def entrant(name: str, command: str, version: int = 1) -> EntrantConfig:
    return EntrantConfig(versioned(name, version), command, command, ".")


class Field:
    """The active versions, changed by the test as a server's submissions would change them."""

    def __init__(self, *entrants: EntrantConfig):
        self.active = {e.name: e for e in entrants}
        self.ever = dict(self.active)

    def __call__(self) -> list[LadderEntrant]:
        return [LadderEntrant(e) for e in self.active.values()]

    def join(self, e: EntrantConfig) -> None:
        self.active[e.name] = e
        self.ever[e.name] = e

    def lookup(self, name: str) -> EntrantConfig | None:
        return self.ever.get(name)


class StopAfter(Observer):
    """Drains the ladder once ``n`` matches are recorded (as SIGTERM would)."""

    def __init__(self, schedule: ArenaSchedule, n: int, then=None):
        self.schedule, self.n, self.then = schedule, n, then

    def started(self, run) -> None:
        pass

    def match_done(self, run, m, outcome) -> None:
        if self.then is not None and len(run.records) == self.n // 2:
            self.then()
        if len(run.records) >= self.n:
            self.schedule.drain()

    def stopped(self, run) -> None:
        pass


def ladder(tmp_path, field: Field, stored=()) -> ArenaSchedule:
    config = parse_config(BASE, base_dir=tmp_path, check_commands=False)
    schedule = ArenaSchedule(config, Matchmaking(provisional=4), 7, field, field.lookup)
    schedule.take_up(stored)
    return schedule


def rows(tmp_path):
    with sqlite3.connect(tmp_path / "r.db") as c:
        return c.execute("select number, key, game, rotation, seats from matches order by number").fetchall()


def test_the_ladder_plays_sets_takes_in_a_new_version_and_drains(tmp_path):
    field = Field(entrant("a", "random"), entrant("b", "first"), entrant("c", "random"))
    schedule = ladder(tmp_path, field)
    late = entrant("d", "first")
    summary = run_tournament(
        schedule.config, database=f"sqlite:///{tmp_path}/r.db", executor=inproc.in_process(inproc.play_inprocess),
        schedule=schedule, observers=[StopAfter(schedule, 24, then=lambda: field.join(late))],
    )  # fmt: skip
    recorded = rows(tmp_path)
    assert len(recorded) >= 24 and summary.played == len(recorded)
    by_set: dict[int, list] = {}
    for number, key, game, rotation, seats in recorded:
        by_set.setdefault(game, []).append((rotation, tuple(json.loads(seats))))
        assert key == str(number + 1)  # the match's one id: its log is ladder-ID.jsonl
        assert (tmp_path / "logs" / f"ladder-{key}.jsonl").is_file()
    assert all(len(ms) == 4 for ms in by_set.values())  # every set played whole: 4 rotations of 4 seats
    everyone = {name for ms in by_set.values() for _, seats in ms for name in seats}
    assert everyone == {"a@1", "b@1", "c@1", "d@1"}  # the late version joined the ladder
    table = {s.name: s for s in standings(sorted(everyone), _records(tmp_path))}
    assert all(table[n].matches > 0 for n in everyone)


def test_a_too_small_field_waits_until_a_second_version_comes(tmp_path):
    field = Field(entrant("a", "random"))
    schedule = ladder(tmp_path, field)
    timer = threading.Timer(1.5, lambda: (field.join(entrant("b", "first")), schedule.changed.set()))
    timer.start()
    run_tournament(
        schedule.config, database=f"sqlite:///{tmp_path}/r.db", executor=inproc.in_process(inproc.play_inprocess),
        schedule=schedule, observers=[StopAfter(schedule, 4)],
    )  # fmt: skip
    timer.join(30)
    assert {name for *_, seats in rows(tmp_path) for name in json.loads(seats)} == {"a@1", "b@1"}


def test_a_restart_first_plays_the_rotations_a_stop_cut_short(tmp_path):
    field = Field(entrant("a", "random"), entrant("b", "first"), entrant("c", "random"), entrant("d", "first"))
    schedule = ladder(tmp_path, field)
    run_tournament(
        schedule.config, database=f"sqlite:///{tmp_path}/r.db", executor=inproc.in_process(inproc.play_inprocess),
        schedule=schedule, observers=[StopAfter(schedule, 8)],
    )  # fmt: skip
    with sqlite3.connect(tmp_path / "r.db") as c:  # as if the stop had come in the middle of set 1
        c.execute("delete from rating_history")
        for table in ("seat_results", "faults"):
            c.execute(f"delete from {table} where match_id in (select id from matches where key in ('6', '8'))")
        c.execute("delete from matches where key in ('6', '8')")
    engine = open_database(f"sqlite:///{tmp_path}/r.db")
    repo = Repo(engine)
    stored = repo.match_rows(repo.tournament("ladder").id)
    engine.dispose()
    for key in ("6", "8"):  # set 1's rotations 2 and 4: the ladder's matches 6 and 8
        (tmp_path / "logs" / f"ladder-{key}.jsonl").unlink()
    again = ladder(tmp_path, field, stored)
    assert [m.key for m in again.matches if m.number not in {r.number for r in stored}] == ["6", "8"]
    summary = run_tournament(
        again.config, database=f"sqlite:///{tmp_path}/r.db", executor=inproc.in_process(inproc.play_inprocess),
        schedule=again, observers=[StopAfter(again, 12)],
    )  # fmt: skip
    recorded = rows(tmp_path)
    keys = [key for _, key, *_ in recorded]
    assert {"6", "8"} <= set(keys) and summary.recorded_before == 6
    assert keys == [str(number + 1) for number, *_ in recorded]  # a match's key is its id
    assert all(len([game for _, _, game, *_ in recorded if game == s]) == 4 for s in (0, 1))


def _records(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path}/r.db")
    try:
        repo = Repo(engine)
        return repo.matches(repo.tournament("ladder").id)
    finally:
        engine.dispose()


def test_versions_are_names_with_their_number():
    assert versioned("alice", 2) == "alice@2"
    assert replace(entrant("a", "random"), cwd="/x").name == "a@1"


def test_the_ladder_records_its_64_bit_set_seeds_in_postgresql(request, tmp_path):
    database = request.getfixturevalue("pg_url")
    field = Field(entrant("a", "random"), entrant("b", "first"), entrant("c", "random"), entrant("d", "first"))
    schedule = ladder(tmp_path, field)
    run_tournament(
        schedule.config, database=database, executor=inproc.in_process(inproc.play_inprocess), schedule=schedule,
        observers=[StopAfter(schedule, 4)],
    )  # fmt: skip
    engine = open_database(database, create=False)
    try:
        repo = Repo(engine)
        seeds = [r.seed for r in repo.match_rows(repo.tournament("ladder").id)]
    finally:
        engine.dispose()
    assert len(seeds) >= 4 and max(seeds) > 2**31  # an arena's set seeds need the 64-bit column
