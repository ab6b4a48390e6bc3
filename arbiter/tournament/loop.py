"""The tournament loop: a schedule hands matches to an executor; observers take each result.

One match, from ``arbiter run`` to its database row: :func:`run_tournament` takes the lease,
the :class:`Recorder` claims the log folder and creates or resumes the tournament, the
:class:`Schedule` lists the matches, :func:`~arbiter.tournament.tasks.make_task` turns each pending one into a
:class:`~arbiter.model.MatchTask`, an executor (arbiter.execution.executors: in this process,
a local pool, the Dask cluster) plays it with arbiter.execution.play.play_task, and every
:class:`Observer` sees the :class:`~arbiter.model.MatchOutcome` in turn: the recorder first (the
match row, its seats and faults and the rating history it completes, in one transaction, fenced
by the lease), then the progress display, a stop rule. Ratings are replayed in schedule order, so
an interrupted and resumed tournament ends exactly where an uninterrupted one would.

Two points of extension, one file each: a new way to schedule matches is a :class:`Schedule`
(its :meth:`~Schedule.grow` adds matches while the run goes: the A/B test's paired sets, an
arena's continuous schedule); a new reaction to a finished match is an :class:`Observer`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from arbiter.errors import ConfigError, TournamentInterrupted
from arbiter.execution.executors import Executor, ExecutorFactory, Venue, default_jobs
from arbiter.execution.play import file_sha256
from arbiter.execution.venues import default_executor
from arbiter.model import MatchOutcome, MatchRecord, MatchTask, ScheduledMatch, SeatRecord, Tally
from arbiter.signals import INTERRUPTS, begin_stop, deferred, signal_of, stop_on_signals
from arbiter.tournament.config import TournamentConfig
from arbiter.tournament.formats import build_schedule, format_of, plays_duplicate_sets
from arbiter.tournament.kept import recorded_deals
from arbiter.tournament.ratings import RatingBook, Standing
from arbiter.tournament.standings import Keeper, table_of
from arbiter.tournament.tasks import make_task, reconcile_log

if TYPE_CHECKING:  # the storage layer (SQLAlchemy) is imported when a run starts: workers start faster
    from sqlalchemy.engine import Engine

    from arbiter.storage import Repo
    from arbiter.storage.lease import Lease
    from arbiter.storage.models import Match
    from arbiter.tournament.logfolder import LogFolder


# ---- what schedules the matches --------------------------------------------------------------
class Schedule:
    """The matches of a tournament file: all known at the start, none added (``grow``)."""

    def __init__(self, config: TournamentConfig):
        self.config = config
        self.matches = self.build()

    def build(self) -> list[ScheduledMatch]:
        c = self.config
        return build_schedule(c.format, c.entrant_names, c.rounds, c.seed, c.challenger)

    def resume(self, stored_rounds: int | None, stored_format: str | None) -> None:
        """What the database holds of this tournament (None: nothing yet), before it is started."""

    def take_up(self, stored: Sequence[Match]) -> None:
        """The tournament's recorded match rows, read once by the run holding the lease, before
        its first match (a schedule that chooses matches as it plays builds its first ones here)."""

    def grow(self, run: Run) -> list[ScheduledMatch]:
        """Matches to add now that the executor has room and nothing is queued (``self.config``
        then holds the grown tournament); none: the run ends when the last one is recorded."""
        return []

    poll_seconds: float | None = None
    """How often the loop asks ``grow`` again while matches play (None: when one ends)."""

    def wait_for_more(self, run: Run) -> bool:
        """Nothing plays and ``grow`` had nothing: whether to ask again (a continuous schedule
        waits here for entrants); False ends the run."""
        return False

    def over(self, run: Run) -> bool:
        """The run ended by itself (no error, no stop signal): whether it is over for good, its
        remote entrants told so (their bridges exit), or only stopped until it is run again."""
        return True

    def paused(self, run: Run) -> bool:
        """Whether to start no match now, nor grow (an arena short of disk space); the matches in
        play go on."""
        return False

    def hold(self, run: Run, error: Exception) -> bool:
        """A match could not be played or recorded, or the schedule's growth not stored, because
        of ``error``: True keeps it to be played (or recorded from its log) once :meth:`paused`
        is False (an arena's full disk); False, as for a tournament, ends the run with ``error``."""
        return False


def schedule_of(config: TournamentConfig) -> Schedule:
    """The schedule of the config's format: its own (one that chooses matches as it plays), or
    every match built at the start."""
    factory = format_of(config.format).schedule
    if factory is None:
        return Schedule(config)
    made = factory(config)
    if not isinstance(made, Schedule):
        raise TypeError(f"format {config.format!r} made {made!r}, not a Schedule")
    return made


# ---- what reacts to a finished match -----------------------------------------------------------
@dataclass
class Run:
    """One run of a tournament as it goes: what its observers may read."""

    config: TournamentConfig
    schedule: list[ScheduledMatch]
    database: str  # as shown (no password)
    repo: Repo
    tournament_id: int
    workers: int  # matches played at once
    records: dict[int, MatchRecord] = field(default_factory=dict)  # the recorded matches by number
    recorded_before: int = 0
    played: int = 0
    aborted: int = 0
    reconciled: int = 0  # finished logs a killed run left unrecorded, recorded from the log now
    arbiter_cpu: float = 0.0
    bots_cpu: float = 0.0  # the bot processes of this machine: a remote seat's CPU is spent elsewhere, unseen
    local_seats: int = 0  # the seats of the matches played now whose CPU bots_cpu counts
    remote_seats: int = 0  # and those played from elsewhere (through the lobby), whose CPU is unknown
    ratings: RatingBook | None = None  # as far as the recorded games go (the recorder keeps it)
    tallies: dict[str, Tally] = field(default_factory=dict)  # each entrant's standing (the recorder keeps it)
    executor: Executor | None = None  # once made: what plays the matches (a schedule may ask it who is connected)

    def connected(self) -> dict[str, int]:
        """The remote entrants connected to the run's lobby now, with the matches each may play at once."""
        return self.executor.connected() if self.executor is not None else {}

    @property
    def duplicate(self) -> bool:
        return plays_duplicate_sets(self.config.format)

    def standings(self) -> list[Standing]:
        return table_of(self.config.entrant_names, self.tallies, self.config.rating, self.config.provisional)


class Observer(Protocol):
    def started(self, run: Run) -> None: ...

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        """``outcome`` of ``m`` is recorded (run.records has it); raising stops the run."""

    def stopped(self, run: Run) -> None: ...


def record_of(m: ScheduledMatch, outcome: MatchOutcome) -> MatchRecord:
    r = outcome.result
    forfeits, strikes = set(r.forfeits), r.strikes
    seats = tuple(SeatRecord(name, r.totals[s], s in forfeits, strikes[s]) for s, name in enumerate(m.seats))
    return MatchRecord(m.number, m.game, r.status, seats)


class Recorder:
    """The observer that records: the log folder claimed, the tournament created or resumed, each
    match with the rating history and the standings it changes in one transaction fenced by the
    lease. The stored matches are read once, at the start; recording a match costs the same
    whatever the history's size."""

    def __init__(self, repo: Repo, lease: Lease, folder: LogFolder):
        self.repo, self.lease, self.folder = repo, lease, folder
        self.keeper: Keeper | None = None
        self.entrant_ids: dict[str, int] = {}
        self.tournament_id: int | None = None

    def open(self, schedule: Schedule, records: dict[int, MatchRecord]) -> int:
        """Claim the folder (first: a run that may not write there changes nothing in the
        database), read what the tournament holds (once: the schedule takes it up too), start it,
        take up its standings (rebuilt when missing or behind); its row id."""
        from arbiter.storage import row_id

        known = self.repo.tournament(schedule.config.name)
        known_rows = self.repo.match_rows(row_id(known)) if known else []
        self.folder.claim({Path(r.log_path).name: r.log_sha256 for r in known_rows}, file_sha256)
        schedule.take_up(known_rows)
        config = schedule.config
        tournament_id = self.extend(config, schedule.matches, stored_rows=known_rows)
        records.update({r.number: r for r in self.repo.matches(tournament_id, known_rows if known else None)})
        self.take_up(tournament_id, config, known_rows, records)
        return tournament_id

    def take_up(
        self, tournament_id: int, config: TournamentConfig, rows: Sequence[Match], records: dict[int, MatchRecord]
    ) -> None:
        """The stored standings if they count every recorded match (the games completed since,
        rated now), else the standings replayed from the recorded matches."""
        keeper = self.keeper
        assert keeper is not None
        mark, tallies = self.repo.standings(tournament_id)
        if mark is not None and mark.matches == len(records):
            keeper.resume(tallies, mark)
            if keeper.next <= keeper.complete_games(records):
                step = keeper.advance(records)
                keeper.adopt(step)
                if step.rows or mark != keeper.mark(len(records)):
                    self.repo.store_standings(
                        tournament_id,
                        step.changed.values(),
                        keeper.mark(len(records)),
                        step.rows,
                        self.entrant_ids,
                        rebuilt=False,
                        fence=self.lease.fence,
                    )
                return
        when = {r.number: r.finished_at for r in rows}
        step = keeper.replay(records, when, recorded_deals(rows, config.rules, config.name, config.format))
        self.repo.store_standings(
            tournament_id,
            step.changed.values(),
            keeper.mark(len(records)),
            step.rows,
            self.entrant_ids,
            rebuilt=True,
            fence=self.lease.fence,
        )

    @property
    def ratings(self) -> RatingBook | None:
        return self.keeper.book if self.keeper is not None else None

    def extend(
        self,
        config: TournamentConfig,
        schedule: list[ScheduledMatch],
        *,
        growing: bool = False,
        stored_rows: Sequence[Match] | None = None,
    ) -> int:
        """Start the tournament in the database (``stored_rows``: its match rows, read once), or
        grow it to ``schedule`` (``growing``: during the run, whose start checked what was
        stored; the schedule only grows at its end)."""
        from arbiter.storage import row_id

        if growing and self.tournament_id is not None:
            self.entrant_ids = self.repo.grow(self.tournament_id, config, len(schedule), self.entrant_ids)
        else:
            tournament, self.entrant_ids = self.repo.start(config, schedule, stored_rows=stored_rows)
            self.tournament_id = row_id(tournament)
        if self.keeper is None:
            duplicate = plays_duplicate_sets(config.format)
            self.keeper = Keeper(config.entrant_names, duplicate=duplicate, double_scoring=config.rules.double_scoring)
        self.keeper.schedule(schedule, config.entrant_names)
        return self.tournament_id

    def started(self, run: Run) -> None:
        run.ratings = self.ratings
        run.tallies = self.keeper.tallies if self.keeper is not None else {}

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        keeper = self.keeper
        assert keeper is not None
        with deferred():  # a stop signal waits until the match is recorded (or not at all)
            record = run.records[m.number] = record_of(m, outcome)
            try:
                when = datetime.now(UTC)
                step = keeper.advance(run.records, record, when, outcome.deals)
                self.repo.record_match(
                    run.tournament_id,
                    m,
                    outcome,
                    self.entrant_ids,
                    step.rows,
                    fence=self.lease.fence,
                    tallies=step.changed.values(),
                    mark=keeper.mark(len(run.records), step.next),
                    finished_at=when,
                )
            except BaseException:
                del run.records[m.number]  # not recorded: the next run plays it again
                raise
            keeper.adopt(step)
            run.ratings, run.tallies = step.book, keeper.tallies
        self.lease.check()

    def stopped(self, run: Run) -> None:
        pass


# ---- the summary ---------------------------------------------------------------------------
@dataclass
class RunSummary:
    tournament: str
    format: str
    database: str
    total: int
    recorded_before: int
    played: int
    aborted: int
    complete: bool
    standings: list[Standing]
    wall_seconds: float
    arbiter_cpu: float = 0.0  # over the matches played in this run
    bots_cpu: float = 0.0  # over their local seats (Run.bots_cpu)
    local_seats: int = 0
    remote_seats: int = 0
    reconciled: int = 0  # finished logs a killed run left unrecorded, recorded from the log now

    def to_json(self) -> dict[str, object]:
        return {
            "tournament": self.tournament,
            "format": self.format,
            "database": self.database,
            "matches": self.total,
            "recorded_before": self.recorded_before,
            "played": self.played,
            "reconciled": self.reconciled,
            "aborted": self.aborted,
            "complete": self.complete,
            "wall_seconds": round(self.wall_seconds, 3),
            "standings": [s.to_json(plays_duplicate_sets(self.format)) for s in self.standings],
        }


# ---- the run -------------------------------------------------------------------------------
def run_tournament(
    config: TournamentConfig,
    *,
    database: str | None = None,
    jobs: int | None = None,
    observers: Sequence[Observer] = (),
    schedule: Schedule | None = None,
    executor: ExecutorFactory = default_executor,
) -> RunSummary:
    """Play every match of the tournament not yet recorded; returns the final standings.

    ``database`` (--db) overrides the file's; ``jobs`` (--jobs) overrides its ``parallelism``;
    ``schedule``: the config's by default; ``executor`` makes what plays the matches from the
    run's :class:`~arbiter.execution.executors.Venue` (by default: worker processes, the Dask
    cluster, the lobby, as the file says).

    The run first takes the tournament's lease in the database (a second run refuses at once,
    naming the holder) and then claims the log folder (see arbiter.tournament.logfolder); a
    finished log whose row a killed run never committed is recorded from the log. Ctrl-C,
    SIGTERM or SIGHUP stop it cleanly (TournamentInterrupted, counting what is recorded).
    """
    started = time.perf_counter()
    if jobs is not None and jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    schedule = schedule or schedule_of(config)
    url = database if database is not None else config.database  # --db "" is an error, not the default
    with stop_on_signals():
        counted: list[Callable[[], int]] = []  # how many matches the database holds, once known
        try:
            return _run(schedule, url, jobs, executor, observers, started, counted)
        except INTERRUPTS as e:
            begin_stop(signal_of(e))
            recorded = counted[0]() if counted else 0
            raise TournamentInterrupted(recorded, len(schedule.matches), signal_of(e)) from None


def _run(
    schedule: Schedule,
    url: str | None,
    jobs: int | None,
    executor: ExecutorFactory,
    observers: Sequence[Observer],
    started: float,
    counted: list[Callable[[], int]],
) -> RunSummary:
    from arbiter.storage import Repo, open_database
    from arbiter.storage.lease import Lease

    engine = open_database(url)
    try:
        repo = Repo(engine)
        known = repo.tournament(schedule.config.name)
        stored = repo.count_matches(known.id) if known is not None and known.id is not None else 0
        counted.append(lambda: stored)
        schedule.resume(known.rounds if known else None, known.format if known else None)
        lease = Lease.take(engine, schedule.config.name).keep_alive()
        try:
            summary = _run_holding_lease(schedule, engine, repo, lease, jobs, executor, observers, counted)
        except BaseException as e:
            begin_stop(signal_of(e))  # stopping: a second signal cannot cut the release short
            lease.release()
            raise
        with deferred():
            lease.release()
        summary.wall_seconds = time.perf_counter() - started
        return summary
    finally:
        engine.dispose()


def _run_holding_lease(
    schedule: Schedule,
    engine: Engine,
    repo: Repo,
    lease: Lease,
    jobs: int | None,
    executor: ExecutorFactory,
    observers: Sequence[Observer],
    counted: list[Callable[[], int]],
) -> RunSummary:
    from arbiter.storage.credentials import EntrantKeys
    from arbiter.tournament.logfolder import LogFolder

    config = schedule.config
    shown_db = engine.url.render_as_string(hide_password=True)
    log_folder = Path(config.log_folder).resolve()
    folder = LogFolder(log_folder, config.name, config.format, lease.folder_key, shown_db)
    recorder = Recorder(repo, lease, folder)
    try:
        records: dict[int, MatchRecord] = {}
        tournament_id = recorder.open(schedule, records)
        config = schedule.config
        pending = [m for m in schedule.matches if m.number not in records]
        workers = max(1, min(jobs or config.parallelism or default_jobs(), len(pending) or 1))
        run = Run(config, schedule.matches, shown_db, repo, tournament_id, workers, records)
        run.recorded_before = len(records)
        counted[:] = [lambda: len(records)]  # a committed match counts, even when a stop comes right after
        everyone: list[Observer] = [recorder, *observers]

        def venue() -> Venue:  # the config of now: a growing schedule adds entrants
            c = schedule.config
            entrants = tuple(e.spec for e in c.entrants)
            keys = EntrantKeys(engine).holder_of
            return Venue(c.name, entrants, workers, log_folder, c.cluster, c.lobby, c.remote_wait, keys)

        for o in everyone:
            o.started(run)
        try:
            loop = _Loop(run, schedule, recorder, everyone, log_folder)
            loop.queue_matches(pending)
            loop.play(lambda: executor(venue()))
        finally:
            for o in everyone:
                o.stopped(run)
        complete = len(records) == len(schedule.matches)
        if complete:
            repo.finish(run.tournament_id)
        return RunSummary(
            tournament=config.name,
            format=config.format,
            database=shown_db,
            total=len(schedule.matches),
            recorded_before=run.recorded_before,
            played=run.played,
            aborted=run.aborted,
            complete=complete,
            standings=run.standings(),
            wall_seconds=0.0,
            arbiter_cpu=run.arbiter_cpu,
            bots_cpu=run.bots_cpu,
            local_seats=run.local_seats,
            remote_seats=run.remote_seats,
            reconciled=run.reconciled,
        )
    finally:
        folder.release()


class _Loop:
    """Keeps the executor busy (two matches queued per slot), hands each result to the observers
    in turn, grows the schedule when it has room."""

    def __init__(
        self,
        run: Run,
        schedule: Schedule,
        recorder: Recorder,
        observers: Sequence[Observer],
        log_folder: Path,
    ):
        self.run, self.schedule, self.recorder, self.observers = run, schedule, recorder, observers
        self.log_folder = log_folder
        self.queue: list[MatchTask] = []
        self.held: list[ScheduledMatch] = []  # kept by the schedule (``hold``) until it resumes
        self.stored = True  # False: the schedule grew, but the database has not stored it yet
        self.by_number = {m.number: m for m in run.schedule}  # kept as the schedule grows

    def _hold(self, matches: Sequence[ScheduledMatch], error: Exception) -> None:
        """Keep ``matches`` for later if the schedule holds them for ``error``; else raise it."""
        if not self.schedule.hold(self.run, error):
            raise error
        self.held.extend(matches)

    def queue_matches(self, matches: Sequence[ScheduledMatch]) -> None:
        """Queue these matches; a finished log that no row records (a run was killed between the
        log's rename and the commit) is recorded from the log instead."""
        for m in matches:
            task = make_task(self.schedule.config, m, self.log_folder)
            if os.path.lexists(task.log_path):
                self.finished(m, reconcile_log(task, self.schedule.config), from_log=True)
            else:
                self.queue.append(task)

    def release(self) -> None:
        """Queue the held matches again (the schedule resumed), after storing its growth."""
        held, self.held = sorted(self.held, key=lambda m: m.number), []
        if not self.stored:
            try:
                self.store_growth()
            except Exception as e:
                self._hold(held, e)
                return
        self.queue_matches(held)

    def finished(self, m: ScheduledMatch, outcome: MatchOutcome, *, from_log: bool = False) -> None:
        run = self.run
        try:
            self.observers[0].match_done(run, m, outcome)  # the recorder: nothing else sees an unrecorded match
        except Exception as e:
            self._hold([m], e)
            return
        if from_log:
            run.reconciled += 1
        else:
            run.played += 1
            run.remote_seats += outcome.remote_seats
            run.local_seats += len(m.seats) - outcome.remote_seats
        run.aborted += not outcome.result.complete
        run.arbiter_cpu += outcome.arbiter_cpu
        run.bots_cpu += outcome.bots_cpu
        for o in self.observers[1:]:
            o.match_done(run, m, outcome)

    def grow(self) -> None:
        new = self.schedule.grow(self.run)
        if new:
            self.run.config = self.schedule.config
            self.run.schedule = self.schedule.matches
            self.by_number.update((m.number, m) for m in new)
            try:
                self.store_growth()
            except Exception as e:
                self.stored = False
                self._hold(new, e)
                return
            self.queue_matches(new)

    def store_growth(self) -> None:
        self.recorder.extend(self.schedule.config, self.schedule.matches, growing=True)
        self.run.ratings = self.recorder.ratings
        self.stored = True

    def play(self, make_executor: Callable[[], Executor]) -> None:
        executor: Executor | None = None
        running: dict[Future[MatchOutcome], MatchTask] = {}
        by_number = self.by_number
        ok = False
        try:
            if self.schedule.poll_seconds is not None:  # continuous: its lobby listens from the start
                executor = self.run.executor = make_executor()
            while True:
                # Fill the executor's window, but first hand on what is already done (in this
                # process a match is played as it is submitted).
                while not any(f.done() for f in running):
                    paused = self.schedule.paused(self.run)
                    if self.held and not paused:
                        self.release()
                    room = executor is None or len(running) < 2 * executor.slots
                    if room and not self.queue and not paused:
                        self.grow()
                    if not room or not self.queue or paused:
                        break
                    if executor is None:  # made when a match is to play: a finished run connects nowhere
                        executor = self.run.executor = make_executor()
                    task = self.queue.pop(0)
                    running[executor.submit(task)] = task
                if not running:
                    if self.schedule.wait_for_more(self.run):
                        continue
                    break
                done, _ = wait(list(running), self.schedule.poll_seconds, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f].number):
                    task = running.pop(future)
                    try:
                        outcome = future.result()
                    except Exception as e:
                        self._hold([by_number[task.number]], e)
                        continue
                    self.finished(by_number[task.number], outcome)
            ok = True
        finally:
            if executor is not None:
                executor.close(cancel=not ok, over=ok and self.schedule.over(self.run))
