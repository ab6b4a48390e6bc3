"""Running a tournament: schedule, play matches in worker processes, record, rate, resume.

The parent process builds the schedule, skips the matches the database already holds, and
hands the others to a pool of worker processes (``spawn``: grpcio is not fork-safe). A worker
plays one match (``play_bot_match``: four bot processes over gRPC) and returns plain values;
only the parent writes to the database, one transaction per match together with the rating
history it completes. Ratings are replayed in schedule order, so an interrupted and resumed
tournament ends exactly where an uninterrupted one would.

The per-match function is injectable (``play=``): tests run in-process matches with the same
runner. It must be a module-level function (the pool pickles it by name).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import multiprocessing
import os
import resource
import shutil
import signal
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from barbu.rules import ruleset_from_json

from arbiter.errors import ArbiterError, ConfigError, TournamentError, TournamentInterrupted
from arbiter.process.procfs import children_of
from arbiter.process.sandbox import Isolation, strongest_isolation
from arbiter.referee.logfile import keep_existing_logs
from arbiter.signals import INTERRUPTS, begin_stop, deferred, signal_of, stop_on_signals
from arbiter.text import printable
from arbiter.tournament.config import TournamentConfig
from arbiter.tournament.ratings import (
    GameOutcome,
    MatchRecord,
    RatingBook,
    RatingRow,
    SeatRecord,
    Standing,
    game_outcome,
    standings,
)
from arbiter.tournament.schedule import ScheduledMatch, block_deals, build_schedule, games

# The storage layer (SQLAlchemy) is imported by the parent only, inside run_tournament: workers
# start faster without it.

log = logging.getLogger(__name__)


# ---- what travels between the parent and a worker (plain, picklable values) -----------------
@dataclass(frozen=True)
class BotEntry:
    name: str
    command: str
    cwd: str | None = None


@dataclass(frozen=True)
class MatchTask:
    number: int
    key: str
    match_id: str
    bots: tuple[BotEntry, ...]  # in seat order
    rules: dict
    seed: int
    deals: tuple[tuple[int, ...], ...] | None
    first_declarer: int
    log_path: str
    time_control: tuple[float, float, float, float]  # per_decision, reserve, connect, match_limit
    max_strikes: int
    limits: Any = None  # arbiter.launcher.Limits of the bots; None: the defaults
    isolation: str = Isolation.NONE
    reuse: bool = True  # a worker may hand a kept bot process (one that said multi_match) this match


@dataclass(frozen=True)
class MatchOutcome:
    number: int
    status: str
    totals: list[int]
    places: list[int]
    forfeits: list[int] = field(default_factory=list)
    faults: list[dict] = field(default_factory=list)  # FaultRecord.to_json()
    reason: str | None = None
    deals: int = 0
    decisions: int = 0
    think_seconds: list[float] = field(default_factory=lambda: [0.0] * 4)
    log_path: str = ""
    log_sha256: str = ""
    wall_seconds: float = 0.0
    arbiter_cpu: float = 0.0
    bots_cpu: float = 0.0


def task_setup(task: MatchTask):
    """The referee's MatchSetup and TimeControl/FaultPolicy for a task."""
    from arbiter.referee.faults import FaultPolicy
    from arbiter.referee.loop import MatchSetup
    from arbiter.referee.timecontrol import TimeControl

    setup = MatchSetup(
        ruleset_from_json(task.rules),
        seed=task.seed,
        first_declarer=task.first_declarer,
        match_id=task.match_id,
        deals=[list(d) for d in task.deals] if task.deals is not None else None,
    )
    return setup, TimeControl(*task.time_control), FaultPolicy(task.max_strikes)


def outcome_from_result(task: MatchTask, result: Any, log_path: Path, wall: float) -> MatchOutcome:
    """Plain values from a referee MatchResult and the finished log file."""
    return MatchOutcome(
        number=task.number,
        status=result.status,
        totals=list(result.totals),
        places=list(result.places),
        forfeits=list(result.forfeits),
        faults=[f.to_json() for f in result.faults],
        reason=result.reason,
        deals=result.deals,
        decisions=result.decisions,
        think_seconds=list(result.think_seconds),
        log_path=str(log_path),
        log_sha256=file_sha256(log_path),
        wall_seconds=wall,
    )


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def play_match(task: MatchTask) -> MatchOutcome:
    """The default per-match function: four bot processes over gRPC (arbiter.match).

    In a worker, every match goes through the worker's one arbiter (:func:`_match_host`: one
    event loop, one gRPC server, bot processes kept between matches for bots that can play
    several); elsewhere each match gets a server of its own."""
    from arbiter.match.play import BotSpec, play_bot_match

    setup, control, policy = task_setup(task)
    bots = [BotSpec(b.name, b.command, b.cwd) for b in task.bots]
    sandbox = {"isolation": task.isolation} | ({"limits": task.limits} if task.limits is not None else {})
    host = _match_host()
    log_path = Path(task.log_path)
    if host is None:
        played = play_bot_match(bots, setup, log_path, time_control=control, fault_policy=policy, **sandbox)
    else:
        played = host.play(
            bots, setup, log_path, time_control=control, fault_policy=policy, reuse=task.reuse, **sandbox
        )
    outcome = outcome_from_result(task, played.result, played.log_path, played.wall_seconds)
    return replace(outcome, bots_cpu=played.bots_cpu)


# ---- the worker side ---------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1


_worker_tmp: str | None = None  # this worker's temporary folder (the matches' Unix sockets)
_host: Any = None  # this worker's arbiter (arbiter.match.play.MatchHost), made at its first match


def _match_host() -> Any:
    """The worker's long-lived arbiter, or None outside a worker (no _worker_init)."""
    global _host
    if _worker_tmp is None:
        return None
    if _host is None:
        from multiprocessing.util import Finalize

        from arbiter.match.play import MatchHost

        _host = MatchHost(reuse=True)
        # Before the temporary folder goes (exitpriority 0): kept bots retired, server stopped.
        Finalize(None, _close_host, exitpriority=10)
    return _host


def _close_host() -> None:
    global _host
    host, _host = _host, None
    if host is not None:
        try:
            host.close()
        except Exception:  # pragma: no cover - a dying worker: its bots die with it anyway
            log.exception("closing the worker's arbiter failed")


def _worker_init(parent_pid: int, log_file: str) -> None:
    """Runs first in every worker: signals, parent-death watch, a private temp folder, logging."""
    global _worker_tmp
    from multiprocessing.util import Finalize

    # A short path (a Unix socket path has at most 107 bytes) that a killed worker can remove.
    _worker_tmp = tempfile.mkdtemp(prefix=f"barbu-w{os.getpid()}-")
    tempfile.tempdir = _worker_tmp
    Finalize(None, shutil.rmtree, args=(_worker_tmp,), kwargs={"ignore_errors": True}, exitpriority=0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, _worker_terminated)
    signal.signal(signal.SIGHUP, _worker_terminated)  # the terminal closed under the whole group
    try:  # Linux: SIGTERM us when the parent dies (kill -9, power cut of the parent alone)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the watch was set
        os._exit(1)
    logging.basicConfig(
        filename=log_file, level=logging.WARNING, format="%(asctime)s %(process)d %(name)s %(levelname)s: %(message)s"
    )
    keep_existing_logs(True)  # a log that exists is somebody's record: commit only under a new name


def _worker_terminated(signum, frame) -> None:  # pragma: no cover - runs in a dying worker
    """Kill the bots of the match in progress (each is its own process group) and leave now."""
    me = os.getpid()
    for pid in children_of(me):
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    if _worker_tmp:
        shutil.rmtree(_worker_tmp, ignore_errors=True)
    os._exit(1)


def run_task(play: Callable[[MatchTask], MatchOutcome], task: MatchTask) -> MatchOutcome:
    """Play one task and measure the CPU it cost: this process (the arbiter) vs its children (bots)."""
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    outcome = play(task)
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # A match between bot processes measures its bots itself (a bot kept for the next match is
    # not reaped, so it is not among this process's children yet).
    kids = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    return replace(
        outcome,
        arbiter_cpu=(self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
        bots_cpu=outcome.bots_cpu or kids,
    )


# ---- ratings over the completed prefix of the schedule --------------------------------------
class RatingTracker:
    """TrueSkill applied game by game in schedule order, as far as the games are complete."""

    def __init__(self, entrants: Sequence[str], schedule: Sequence[ScheduledMatch]):
        self.games = games(schedule)
        self.book = RatingBook(entrants)
        self.next = 0  # index in self.games of the first game not yet applied

    def advance(self, records: dict[int, MatchRecord]) -> tuple[RatingBook, int, list[RatingRow]]:
        """The book, pointer and history rows after applying every newly complete game."""
        book, nxt, rows = self.book.copy(), self.next, []
        while nxt < len(self.games) and all(n in records for n in self.games[nxt]):
            outcome: GameOutcome | None = game_outcome([records[n] for n in self.games[nxt]])
            if outcome is not None:
                for name, r in sorted(book.rate(outcome).items()):
                    rows.append(RatingRow(outcome.game, outcome.last_match, name, r.mu, r.sigma))
            nxt += 1
        return book, nxt, rows

    def adopt(self, book: RatingBook, nxt: int) -> None:
        self.book, self.next = book, nxt


def record_of(m: ScheduledMatch, outcome: MatchOutcome) -> MatchRecord:
    strikes = [0, 0, 0, 0]
    for f in outcome.faults:
        strikes[f["seat"]] += 1
    forfeits = set(outcome.forfeits)
    seats = tuple(SeatRecord(name, outcome.totals[s], s in forfeits, strikes[s]) for s, name in enumerate(m.seats))
    return MatchRecord(m.number, m.game, outcome.status, seats)


# ---- progress reporting ------------------------------------------------------------------
class Reporter:
    """What the runner tells as it goes; the CLI shows it with rich, tests stay silent."""

    def started(self, config: TournamentConfig, total: int, recorded: int, workers: int, database: str) -> None:
        pass

    def match_done(self, m: ScheduledMatch, outcome: MatchOutcome, recorded: int, total: int) -> None:
        pass

    def live_standings(self, table: list[Standing], recorded: int, total: int) -> None:
        pass

    def stopped(self) -> None:
        pass


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
    bots_cpu: float = 0.0
    reconciled: int = 0  # finished logs a killed run left unrecorded, recorded from the log now

    def to_json(self) -> dict:
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
            "standings": [s.to_json(self.format == "duplicate") for s in self.standings],
        }


def make_task(config: TournamentConfig, m: ScheduledMatch, log_folder: Path) -> MatchTask:
    tc = config.time_control
    deals = None
    if config.deals is not None:
        deals = tuple(tuple(d) for d in block_deals(config.deals, m.deal_block, config.rules.deals_per_match))
    bots = []
    for name in m.seats:
        e = config.entrant(name)
        bots.append(BotEntry(name, e.launch or "", e.cwd))
    return MatchTask(
        number=m.number,
        key=m.key,
        match_id=f"{config.name}/{m.key}",
        bots=tuple(bots),
        rules=config.rules.to_json(),
        seed=m.seed,
        deals=deals,
        first_declarer=m.first_declarer,
        log_path=str(log_folder / f"{config.name}-{m.key}.jsonl"),
        time_control=(tc.per_decision, tc.reserve, tc.connect, tc.match_limit),
        max_strikes=config.fault_policy.max_strikes,
        limits=config.limits,
        isolation=config.isolation or strongest_isolation(),  # a config resolve_environment did not see
    )


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_tournament(
    config: TournamentConfig,
    *,
    database: str | None = None,
    jobs: int | None = None,
    play: Callable[[MatchTask], MatchOutcome] = play_match,
    reporter: Reporter | None = None,
    in_process: bool = False,
) -> RunSummary:
    """Play every match of the tournament not yet recorded; returns the final standings.

    ``database`` (--db) overrides the file's; ``jobs`` (--jobs) overrides its ``parallelism``.
    ``in_process`` plays in this process, one match at a time (for tests of the runner).

    The run first takes the tournament's lease in the database (a second run refuses at once,
    naming the holder) and then claims the log folder (see arbiter.tournament.logfolder); a
    finished log whose row a killed run never committed is recorded from the log. Ctrl-C,
    SIGTERM or SIGHUP stop it cleanly (TournamentInterrupted, counting what is recorded).
    """
    from arbiter.tournament.storage import open_database
    from arbiter.tournament.storage.lease import Lease

    started = time.perf_counter()
    reporter = reporter or Reporter()
    remote = [e for e in config.entrants if e.remote]
    if remote:
        where = f"{config.path}:{remote[0].line}: " if config.path else ""
        raise ConfigError(
            f"{where}entrants: {remote[0].name!r} is a remote entrant; `arbiter run` cannot play remote entrants yet "
            "(each match needs a fresh per-seat token); give it a command instead"
        )
    if jobs is not None and jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    schedule = build_schedule(config.format, config.entrant_names, config.rounds, config.seed, config.challenger)
    url = database if database is not None else config.database  # --db "" is an error, not the default
    with stop_on_signals():
        engine = open_database(url)
        try:
            lease = Lease.take(engine, config.name).keep_alive()
            try:
                summary = _run_holding_lease(config, schedule, engine, lease, jobs, play, reporter, in_process, started)
            except BaseException as e:
                begin_stop(signal_of(e))  # stopping: a second signal cannot cut the release short
                lease.release()
                raise
            with deferred():
                lease.release()
            return summary
        finally:
            engine.dispose()


def _run_holding_lease(
    config: TournamentConfig,
    schedule: list[ScheduledMatch],
    engine: Any,
    lease: Any,
    jobs: int | None,
    play: Callable[[MatchTask], MatchOutcome],
    reporter: Reporter,
    in_process: bool,
    started: float,
) -> RunSummary:
    from arbiter.tournament.logfolder import LogFolder
    from arbiter.tournament.storage import Repo, row_id

    by_number = {m.number: m for m in schedule}
    shown_db = engine.url.render_as_string(hide_password=True)
    repo = Repo(engine)
    records: dict[int, MatchRecord] = {}
    folder: LogFolder | None = None
    try:
        # The log folder first: a run that may not write there changes nothing in the database.
        log_folder = Path(config.log_folder).resolve()
        folder = LogFolder(log_folder, config.name, lease.folder_key, shown_db)
        known = repo.tournament(config.name)
        known_rows = repo.match_rows(row_id(known)) if known else []
        folder.claim({Path(r.log_path).name: r.log_sha256 for r in known_rows}, file_sha256)

        tournament, entrant_ids = repo.start(config, schedule)
        tournament_id = row_id(tournament)
        records.update({r.number: r for r in repo.matches(tournament_id)})
        tracker = RatingTracker(config.entrant_names, schedule)
        book, nxt, rows = tracker.advance(records)
        repo.replace_rating_history(tournament_id, rows, entrant_ids)  # rebuilt, so it is never stale
        tracker.adopt(book, nxt)

        recorded_before = len(records)
        pending = [m for m in schedule if m.number not in records]
        workers = max(1, min(jobs or config.parallelism or default_jobs(), len(pending) or 1))
        reporter.started(config, len(schedule), recorded_before, 0 if in_process else workers, shown_db)
        every = config.standings_every or max(4, len(schedule) // 8)
        played = aborted = reconciled = 0
        cpu = [0.0, 0.0]

        def finished(outcome: MatchOutcome, *, from_log: bool = False) -> None:
            nonlocal played, aborted, reconciled
            m = by_number[outcome.number]
            with deferred():  # a stop signal waits until the match is recorded (or not at all)
                records[m.number] = record_of(m, outcome)
                try:
                    book, nxt, rows = tracker.advance(records)
                    repo.record_match(tournament_id, m, outcome, entrant_ids, rows, fence=lease.fence)
                except BaseException:
                    del records[m.number]  # not recorded: the next run plays it again
                    raise
                tracker.adopt(book, nxt)
            if from_log:
                reconciled += 1
            else:
                played += 1
            aborted += outcome.status != "complete"
            cpu[0] += outcome.arbiter_cpu
            cpu[1] += outcome.bots_cpu
            reporter.match_done(m, outcome, len(records), len(schedule))
            if len(records) < len(schedule) and played and played % every == 0 and not from_log:
                reporter.live_standings(
                    standings(config.entrant_names, list(records.values()), config.format == "duplicate"),
                    len(records),
                    len(schedule),
                )
            lease.check()

        tasks = [make_task(config, m, log_folder) for m in pending]
        # A finished log that no row records: a run was killed between the rename and the commit.
        for task in tasks:
            if os.path.lexists(task.log_path):
                finished(reconcile_log(task, config), from_log=True)
        tasks = [t for t in tasks if t.number not in records]
        try:
            if in_process:
                keep = keep_existing_logs(True)
                try:
                    for task in tasks:
                        finished(run_task(play, task))
                finally:
                    keep_existing_logs(keep)
            elif tasks and config.cluster:  # arbiter run --cluster: the matches are Dask tasks (docs/cluster.md)
                from arbiter.tournament.cluster import run_on_cluster

                run_on_cluster(config, tasks, play, log_folder, finished)
            elif tasks:
                _run_pool(tasks, play, workers, log_folder / "arbiter.log", finished)
        finally:
            reporter.stopped()

        complete = len(records) == len(schedule)
        if complete:
            repo.finish(tournament_id)
        table = standings(config.entrant_names, repo.matches(tournament_id), config.format == "duplicate")
        return RunSummary(
            tournament=config.name,
            format=config.format,
            database=shown_db,
            total=len(schedule),
            recorded_before=recorded_before,
            played=played,
            aborted=aborted,
            complete=complete,
            standings=table,
            wall_seconds=time.perf_counter() - started,
            arbiter_cpu=cpu[0],
            bots_cpu=cpu[1],
            reconciled=reconciled,
        )
    except INTERRUPTS as e:
        begin_stop(signal_of(e))
        raise TournamentInterrupted(len(records), len(schedule), signal_of(e)) from None
    finally:
        if folder is not None:
            folder.release()


def reconcile_log(task: MatchTask, config: TournamentConfig) -> MatchOutcome:
    """The outcome of a pending match whose finished log exists (a kill came between the
    worker's rename and the parent's commit), read from that log; a log that is not that match
    is a ConfigError: it is left as it is, for a person to look at."""
    from arbiter.tournament.logfolder import outcome_fields_from_log

    path = Path(task.log_path)
    fields = outcome_fields_from_log(path) if path.is_file() and not path.is_symlink() else None
    header = (fields or {}).get("header") or {}
    seats = header.get("seats")
    if not isinstance(seats, list):
        seats = []
    fits = (
        fields is not None
        and header.get("match_id") == task.match_id
        and [s.get("entrant") if isinstance(s, dict) else None for s in seats] == [b.name for b in task.bots]
        and header.get("seed") == task.seed
        and header.get("rules") == task.rules
    )
    if not fits:
        raise ConfigError(
            f"log folder {printable(str(path.parent))} holds {printable(path.name)}, which this database does not "
            f"record and which is not a finished log of match {task.key} of tournament {config.name!r}; it is "
            "left as it is: move it away (or give the tournament another log_folder) and run again"
        )
    assert fields is not None
    return MatchOutcome(
        number=task.number,
        status=fields["status"],
        totals=fields["totals"],
        places=fields["places"],
        forfeits=fields["forfeits"],
        faults=fields["faults"],
        reason=fields["reason"],
        deals=fields["deals"],
        decisions=fields["decisions"],
        think_seconds=fields["think_seconds"],
        log_path=str(path),
        log_sha256=file_sha256(path),
    )


def _run_pool(
    tasks: list[MatchTask],
    play: Callable[[MatchTask], MatchOutcome],
    workers: int,
    log_file: Path,
    finished: Callable[[MatchOutcome], None],
) -> None:
    """Play the tasks on ``workers`` spawned processes; ``finished`` runs here, in the parent."""
    executor = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
        initargs=(os.getpid(), str(log_file)),
    )
    ok = False
    try:
        # Keep a few tasks queued per worker, not all: an interrupted run then has little to cancel.
        queue = list(reversed(tasks))
        running: dict[Future, MatchTask] = {}

        def refill() -> None:
            while queue and len(running) < 2 * workers:
                task = queue.pop()
                running[executor.submit(run_task, play, task)] = task

        refill()
        while running:
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f].number):
                task = running.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    raise TournamentError(
                        f"a worker process died while playing match {task.key}; run the same command again to resume"
                    ) from None
                except ArbiterError as e:
                    raise TournamentError(f"match {task.key} could not be played: {e}") from None
                except Exception as e:
                    raise TournamentError(f"match {task.key} failed in its worker: {type(e).__name__}: {e}") from None
                finished(outcome)
            refill()
        ok = True
    finally:
        if ok:
            executor.shutdown(wait=True)
        else:
            _stop_pool(executor)


def _stop_pool(executor: ProcessPoolExecutor) -> None:
    """Stop now: queued matches are dropped, running ones end (their bots are killed)."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        try:
            p.terminate()  # SIGTERM: the worker kills its bots and exits (_worker_terminated)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + 10
    for p in processes:
        try:
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
        except (OSError, ValueError, AssertionError):
            pass
