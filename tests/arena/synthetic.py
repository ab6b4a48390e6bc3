"""A synthetic arena history: the arena's own loop recording made-up outcomes made at once, and a
bulk loader of whole duplicate sets with their standings replayed. For the tests of an arena with a
long history and for bench/arena.py, which measures the recorder and the API over one.
"""

from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from barbu.matchlog import MatchResult, MatchStatus
from sqlalchemy import insert, text

from arbiter.arena.config import ArenaConfig
from arbiter.arena.ladder import ArenaSchedule
from arbiter.arena.serve import field_of
from arbiter.model import MatchOutcome, MatchTask, ScheduledMatch
from arbiter.storage import Repo, open_database, row_id
from arbiter.storage.arena import ArenaStore
from arbiter.storage.models import Match, SeatResult, now, table_of
from arbiter.tournament.kept import rebuild_standings
from arbiter.tournament.loop import Run, run_tournament
from arbiter.tournament.schedule import rotations
from tests.tournament.inproc import in_process

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
ARENA = "bench"


def write_arena(folder: Path, entrants: int, jobs: int) -> Path:
    """An arena of ``entrants`` house entrants, half the heuristic sample bot, half the random one."""
    lines = []
    for i in range(entrants):
        bot = "heuristic" if i % 2 == 0 else "random"
        lines.append(f"  - {{name: {bot}{i // 2 + 1:02d}, command: {PY} {ROOT}/sample_bots/{bot}_bot.py}}")
    text = f"""name: {ARENA}
entrants:
{chr(10).join(lines)}
rules: {{preset: standard}}
time_control: {{per_decision: 2, reserve: 10, connect: 20, match_limit: 300}}
web: 127.0.0.1:0
parallelism: {jobs}
drain_seconds: 30
database: {folder}/arena.db
log_folder: {folder}/matches
store: {folder}/bundles
"""
    path = folder / "arena.yaml"
    path.write_text(text)
    return path


def synthetic_play(task: MatchTask, log_path: str | None = None) -> MatchOutcome:
    """A made-up outcome of a full match, at once: the stronger entrant (its name's number, the
    heuristic over the random bot) tends to score more, so the ratings move as in a real ladder."""
    rng = random.Random(task.seed * 4 + task.number)
    strength = [(40 if b.name.startswith("heuristic") else 0) + int(re.sub(r"\D", "", b.name) or 0) for b in task.bots]
    totals = [round(rng.gauss(s, 60)) for s in strength]
    mean = sum(totals) // 4
    totals = [t - mean for t in totals]
    order = sorted(range(4), key=lambda s: -totals[s])
    places = [order.index(s) + 1 for s in range(4)]
    result = MatchResult(
        MatchStatus.COMPLETE, tuple(totals), tuple(places), deals=28, decisions=1400,
        think_seconds=tuple(rng.uniform(1, 3) for _ in range(4)),
    )  # fmt: skip
    path = task.log_path if log_path is None else log_path
    return MatchOutcome(task.number, result, path, "0" * 64, wall_seconds=rng.uniform(5, 10))


class StopAfter:
    """The observer that drains the ladder once ``matches`` are recorded (the set in play ends)."""

    def __init__(self, schedule: ArenaSchedule, matches: int):
        self.schedule, self.matches = schedule, matches
        self.times: list[float] = []  # when each match was recorded
        self.cpu: list[float] = []  # this process's CPU time then (the recorder, SQLite, matchmaking)

    def started(self, run: Run) -> None:
        pass

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        self.times.append(time.perf_counter())
        self.cpu.append(time.process_time())
        if run.played >= self.matches:
            self.schedule.drain()

    def stopped(self, run: Run) -> None:
        pass


def record_synthetic(arena: ArenaConfig, url: str, matches: int) -> tuple[int, float, StopAfter]:
    """``matches`` synthetic matches recorded through the arena's loop (as ``arbiter serve``
    builds it); how many were recorded, the seconds the start took (the stored matches read, the
    standings taken up) and when each was recorded."""
    started = time.perf_counter()
    engine = open_database(url)
    try:
        field, lookup = field_of(arena, ArenaStore(engine))
        schedule = ArenaSchedule(arena.tournament, arena.matchmaking, arena.seed, field, lookup)
    finally:
        engine.dispose()
    stop = StopAfter(schedule, matches)
    summary = run_tournament(
        schedule.config, database=url, executor=in_process(synthetic_play), observers=[stop], schedule=schedule
    )
    return summary.played, stop.times[0] - started if stop.times else 0.0, stop


def load_history(arena: ArenaConfig, url: str, matches: int, seed: int = 1) -> float:
    """The bulk loader: ``matches`` synthetic matches (whole duplicate sets of four distinct house
    entrants, outcomes as :func:`synthetic_play` makes them) inserted as the recorder writes their
    rows, then the standings replayed from them by ``arbiter standings --rebuild``'s repair tool;
    the seconds it took. The tournament is created first by the arena's own loop (one set)."""
    started = time.perf_counter()
    record_synthetic(arena, url, 1)
    engine = open_database(url)
    try:
        repo = Repo(engine)
        t = repo.require_tournament(arena.name)
        t_id = row_id(t)
        ids = {name: i for i, name in repo.entrants_by_id(t_id).items()}
        names = sorted(ids)
        first_set = max(r.game for r in repo.match_rows(t_id)) + 1
        number = repo.count_matches(t_id)
        rng = random.Random(seed)
        match_rows, seat_rows = [], []
        with engine.begin() as c:
            next_id = c.execute(text("select coalesce(max(id), 0) from matches")).scalar_one() + 1
            for k in range((matches + 3) // 4):
                game = first_set + k
                set_seed = rng.getrandbits(62)
                for rotation, seats in enumerate(rotations(tuple(rng.sample(names, 4)))):
                    task = SimpleNamespace(seed=set_seed, number=number, bots=[SimpleNamespace(name=n) for n in seats])
                    r = synthetic_play(task, "").result  # type: ignore[arg-type]
                    match_rows.append({
                        "id": next_id, "tournament_id": t_id, "number": number, "key": f"a{game}-{rotation + 1}",
                        "round": game, "table_no": 0, "rotation": rotation, "game": game, "seed": set_seed,
                        "seats": list(seats), "status": "complete", "reason": None, "deals": 28,
                        "totals": list(r.totals), "places": list(r.places), "log_path": "", "log_sha256": "",
                        "wall_seconds": 5.0, "arbiter_cpu": 0.0, "bots_cpu": 0.0, "finished_at": now(),
                    })  # fmt: skip
                    for seat, name in enumerate(seats):
                        seat_rows.append({
                            "match_id": next_id, "entrant_id": ids[name], "seat": seat, "total": r.totals[seat],
                            "place": r.places[seat], "forfeited": False, "faults": 0, "think_seconds": 1.0,
                        })  # fmt: skip
                    next_id += 1
                    number += 1
                if len(match_rows) >= 4000:
                    c.execute(insert(table_of(Match)), match_rows)
                    c.execute(insert(table_of(SeatResult)), seat_rows)
                    match_rows, seat_rows = [], []
            if match_rows:
                c.execute(insert(table_of(Match)), match_rows)
                c.execute(insert(table_of(SeatResult)), seat_rows)
            if c.dialect.name == "postgresql":  # the server's own counter, past the ids given here
                c.execute(text("select setval(pg_get_serial_sequence('matches', 'id'), (select max(id) from matches))"))
        rebuild_standings(engine, repo.require_tournament(arena.name))
    finally:
        engine.dispose()
    return time.perf_counter() - started
