"""``arbiter serve``: a standing arena in one process, on the one tournament loop.

The main thread runs the loop (arbiter.tournament.loop) with the ladder's schedule
(arbiter.arena.ladder): the arena is a tournament that never ends, recorded, rated, leased and
resumed as tournaments are. Once the loop holds the arena's lease, the :class:`ArenaHost`
observer starts the rest: the API (arbiter.arena.api) served by uvicorn in a thread, the
:class:`Checker`, which runs each submission through check-bot in a worker process of its own,
one at a time and the authors in turn, and makes it active or rejected, and the store's sweep
(arbiter.arena.quotas). A version that becomes active, or retires, wakes the ladder. A disk
short of space pauses the ladder, the checker and uploads (arbiter.arena.disk); the API stays up.

The first SIGTERM or Ctrl-C drains: no set starts, the matches in play finish, the run ends
(exit 0). A second signal, or ``drain_seconds`` after the first, stops at once: the matches in
play are abandoned, their logs never written, and a restart plays them again. A check in progress
is abandoned too and done again at the restart.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbiter.arena.archive import entrant_file
from arbiter.arena.checking import check_submission, playable_folder
from arbiter.arena.config import ArenaConfig
from arbiter.arena.disk import DiskWatch, disk_full
from arbiter.arena.ladder import POLL_SECONDS, ArenaSchedule, LadderEntrant, versioned
from arbiter.errors import SubmissionRefused, TournamentInterrupted
from arbiter.execution.bundle import cached
from arbiter.execution.processes import WorkerDied, WorkerProcess
from arbiter.model import Isolation, MatchOutcome, ScheduledMatch
from arbiter.signals import draining_on_signals
from arbiter.tournament.config import EntrantConfig, override
from arbiter.tournament.config.environment import launch_command
from arbiter.tournament.loop import Run, RunSummary, run_tournament

if TYPE_CHECKING:
    from arbiter.arena.play import HumanTables
    from arbiter.arena.quotas import Uploads
    from arbiter.arena.webserver import WebServer
    from arbiter.storage.arena import ArenaStore, SubmissionRow

__all__ = ["ArenaHost", "Checker", "ServeResult", "serve"]

log = logging.getLogger(__name__)

CHECK_STOP_SECONDS = 5.0  # for a check in progress to end its bots when the arena stops
MATCHES_PER_LINE = 10  # the operator's log says how the ladder goes every this many matches


@dataclass
class ServeResult:
    """How a served arena ended."""

    arena: str
    web: str  # the address it served on
    played: int  # matches recorded by this run
    recorded_before: int
    abandoned: bool  # stopped before the matches in play ended (they are played again at a restart)
    wall_seconds: float


# ---- checking submissions ------------------------------------------------------------------------
class Checker:
    """Checks the submitted versions, one at a time, in a worker process: the authors in
    turn (round robin: an author's next submission waits until every other author with one
    waiting had a check), each author's oldest first. It starts no check while ``disk`` says the
    arena is short of space; a decision the database could not store for want of space is made
    again once it has room."""

    def __init__(
        self,
        arena: ArenaConfig,
        store: ArenaStore,
        woke: Callable[[], None],
        disk: DiskWatch | None = None,
        decided: Callable[[int, str], None] = lambda submission_id, status: None,
    ):
        self.arena, self.store, self.woke, self.disk, self.decided = arena, store, woke, disk, decided
        self._waiting: dict[str, deque[int]] = {}  # each author's submissions to check, oldest first
        self._turns: deque[str] = deque()  # the authors with one waiting, whose turn is first first
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="barbu-checker", daemon=True)
        self._worker: WorkerProcess | None = None  # the worker process checks run in, started at the first
        self._stopping = False
        self._seen: set[int] = set()  # the submissions queued once: never queued again

    def start(self) -> None:
        for row in self.store.checking(self.arena.name):  # left unchecked by an earlier run
            self._put(row.author, row.id)
        self._thread.start()

    def enqueue(self, submission_id: int) -> None:
        row = self.store.submission(submission_id)
        if row is not None:
            self._put(row.author, submission_id)

    def _put(self, author: str, submission_id: int, *, again: bool = False) -> None:
        with self._ready:
            if submission_id in self._seen and not again:
                return
            self._seen.add(submission_id)
            if author not in self._waiting:
                self._waiting[author] = deque()
                self._turns.append(author)
            self._waiting[author].append(submission_id)
            self._ready.notify()

    def _adopt(self) -> None:
        """The submissions other processes accepted (the API processes apart, arbiter.arena.replicas):
        each ``checking`` row not seen yet is queued, once."""
        try:
            rows = self.store.checking(self.arena.name)
        except Exception as e:  # the database away for a moment: the next look finds them
            log.warning("looking for submissions to check failed: %s", e)
            return
        for row in rows:
            if row.id not in self._seen:
                self._put(row.author, row.id)

    def _next(self) -> tuple[str, int] | None:
        """The next submission to check, from the author whose turn it is; None: stopping."""
        while True:
            with self._ready:
                if self._stopping:
                    return None
                if self._turns and not (self.disk is not None and self.disk.paused()):
                    break
                self._ready.wait(POLL_SECONDS)
                if self._stopping or self._turns:
                    continue
            self._adopt()  # outside the lock: an upload's enqueue is not kept waiting on the database
        with self._ready:
            author = self._turns.popleft()
            mine = self._waiting[author]
            submission_id = mine.popleft()
            if mine:
                self._turns.append(author)  # after every other author waiting
            else:
                del self._waiting[author]
            return author, submission_id

    def stop(self) -> None:
        with self._ready:
            self._stopping = True
            self._ready.notify_all()
        worker = self._worker
        if worker is not None:
            worker.cancel()  # it kills the check's bots and leaves; the submission stays `checking`
        self._thread.join(CHECK_STOP_SECONDS)
        if worker is not None:
            worker.stop()

    def _work(self) -> None:
        while (turn := self._next()) is not None:
            author, submission_id = turn
            try:
                self._check(submission_id)
            except Exception as e:  # a broken check must not stop the arena: it is logged, the next goes on
                if self.disk is not None and disk_full(e):
                    self.disk.failed(e)
                    self._put(author, submission_id, again=True)  # checked again once the disk has room
                else:
                    log.exception("checking submission %s failed", submission_id)

    def _check(self, submission_id: int) -> None:
        row = self.store.submission(submission_id)
        if row is None or row.status != "checking":
            return
        folder = cached(row.bundle, self.arena.store)
        if folder is None:
            self.store.decide(submission_id, False, '{"ok": false, "error": "its files are gone from the store"}')
            return
        tournament = self.arena.tournament
        if self._worker is None or not self._worker.alive():
            self._worker = WorkerProcess(str(Path(tournament.log_folder) / "arbiter.log"))
        isolation, limits = tournament.isolation or Isolation.NONE, tournament.limits
        try:
            limit, connect = self.arena.check_time_limit, tournament.time_control.connect
            passed, report = self._worker.call(
                check_submission,
                folder,
                row.command,
                isolation=isolation,
                limits=limits,
                time_limit=limit,
                connect=connect,
            )
        except WorkerDied:  # stopped (or killed): checked again at the next start
            return
        except Exception as e:  # the check itself failed: the author is told so, not left waiting
            passed, report = False, json.dumps({"ok": False, "error": str(e)})
        if self._stopping:
            return
        decided = self.store.decide(submission_id, bool(passed), report)
        log.info("submission %d (%s): %s", submission_id, decided.versioned_name, decided.status)
        self.decided(submission_id, decided.status)
        self.woke()


# ---- the arena ------------------------------------------------------------------------------------
class ArenaHost:
    """The observer that runs what surrounds the ladder while the loop holds the lease: the web
    server, the checker and the store's sweep; it also says what is in play."""

    def __init__(
        self, arena: ArenaConfig, url: str | None, web: str, schedule: ArenaSchedule, announce: Callable[[str], None]
    ):
        self.arena, self.url, self.listen, self.schedule, self.announce = arena, url, web, schedule, announce
        self.log_file = Path(arena.tournament.log_folder) / "arbiter.log"
        self.run: Run | None = None
        self.web: WebServer | None = None
        self.checker: Checker | None = None
        self.tables: HumanTables | None = None
        self.engine: Any = None
        self._sweeper: threading.Thread | None = None
        self._stopping = threading.Event()
        from arbiter.arena.events import EventHub  # with the web server's imports: not at the CLI's start

        self.events = EventHub()

    def _in_play(self) -> list[ScheduledMatch]:
        run = self.run
        return [] if run is None else [m for m in self.schedule.matches if m.number not in run.records]

    def in_flight(self) -> int:
        return len(self._in_play())

    def seated(self) -> set[str]:
        """The versions seated in matches not yet recorded: their files stay in the store."""
        return {name for m in self._in_play() for name in m.seats}

    def started(self, run: Run) -> None:
        from arbiter.arena.api import create_app
        from arbiter.arena.corner import session_secret
        from arbiter.arena.play import HumanTables
        from arbiter.arena.quotas import Uploads, sweep_seconds
        from arbiter.arena.service import ArenaService
        from arbiter.arena.webserver import WebServer
        from arbiter.storage import open_database
        from arbiter.storage.arena import ArenaStore

        self.run = run
        self.engine = open_database(self.url)
        store = ArenaStore(self.engine)
        disk = self.schedule.disk
        self.checker = Checker(self.arena, store, self.schedule.changed.set, disk, self._decided)
        house = [e.name for e in self.arena.tournament.entrants]
        uploads = Uploads(
            self.arena.name,
            store,
            self.arena.store,
            enqueue=self.checker.enqueue,
            house=house,
            limits=self.arena.uploads,
            quotas=self.arena.quotas,
            disk=disk,
            in_play=self.seated,
        )
        self._sweep_once(uploads)  # before anyone uploads: what a killed upload left goes
        self._sweeper = threading.Thread(
            target=self._sweep, args=(uploads, sweep_seconds(self.arena.quotas)), name="barbu-sweep", daemon=True
        )
        service = ArenaService(
            self.engine,
            self.arena.name,
            Path(self.arena.tournament.log_folder),
            uploads=uploads,
            house=house,
            in_flight=self.in_flight,
            in_play=self._in_play,
            paused=disk.paused if disk is not None else lambda: None,
            rating=self.arena.tournament.rating,
            provisional=self.arena.tournament.provisional,
        )
        self.tables = HumanTables(self.arena.tournament, service, self.schedule.lookup, self.arena.human_tables)
        app = create_app(service, hub=self.events, secret=session_secret(self.arena.store), tables=self.tables)
        self.web = WebServer(app, self.listen, proxies=self.arena.proxies)
        self.web.start()
        self.checker.start()
        self._sweeper.start()
        site = f"http://{self.web.address}"
        self.announce(
            f"arena {self.arena.name!r}: serving {site} (database {run.database}; log {self.log_file})\n"
            f"  the site:     {site}/\n  your corner:  {site}/me   (authors log in with their token)\n"
            f"  the API docs: {site}/docs"
        )

    def _sweep(self, uploads: Uploads, seconds: float) -> None:
        """The store's sweep, every ``seconds`` until the arena stops."""
        while not self._stopping.wait(seconds):
            self._sweep_once(uploads)

    @staticmethod
    def _sweep_once(uploads: Uploads) -> None:
        """One sweep; one that fails is logged, and the arena goes on (the next may succeed)."""
        try:
            uploads.sweep()
        except Exception as e:
            log.warning("sweeping the bundle store failed: %s", e)

    def _decided(self, submission_id: int, status: str) -> None:
        """A check is over: the open corners show it without a reload."""
        self.events.publish({"type": "submission", "id": submission_id, "status": status})

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        if outcome.result.status != "complete":
            log.info("match %d aborted: %s", m.number + 1, outcome.result.reason)
        if run.played and run.played % MATCHES_PER_LINE == 0:
            log.info(
                "%d matches recorded by this run (%d before), %d in play, %d aborted",
                run.played,
                run.recorded_before,
                self.in_flight(),
                run.aborted,
            )
        event = {"type": "match", "id": m.number + 1, "status": outcome.result.status}  # its public id
        self.events.publish(event)
        if self.engine is not None:
            from arbiter.arena.replicas import notify

            notify(self.engine, self.arena.name, event, self.in_flight())  # the API processes apart (PostgreSQL)

    def stopped(self, run: Run) -> None:
        self.events.close()  # open event streams end, so the web server can stop
        if self.tables is not None:
            self.tables.close()  # people's tables stop: their bots are killed
        self._stopping.set()
        if self._sweeper is not None and self._sweeper.is_alive():
            self._sweeper.join(CHECK_STOP_SECONDS)
        if self.checker is not None:
            self.checker.stop()
        if self.web is not None:
            self.web.stop()
        if self.engine is not None:
            self.engine.dispose()


def field_of(
    arena: ArenaConfig, store: ArenaStore
) -> tuple[Callable[[], list[LadderEntrant]], Callable[[str], EntrantConfig | None]]:
    """The ladder's active versions (the house's, as ``NAME@1``, and the submitted ones that
    passed their check) and a lookup of any version by its name."""
    house = {versioned(e.name, 1): replace(e, name=versioned(e.name, 1)) for e in arena.tournament.entrants}

    def submitted(row: SubmissionRow) -> EntrantConfig | None:
        folder = cached(row.bundle, arena.store)
        if folder is None:
            log.warning("%s: its files are gone from the store %s", row.versioned_name, arena.store)
            return None
        try:
            transport = entrant_file(folder).transport
        except SubmissionRefused:  # it was read when it was checked: a store changed since is not played
            log.warning("%s: its entrant.yaml cannot be read any more", row.versioned_name)
            return None
        runs = playable_folder(folder)  # its build's copy, for a bot with a build step
        if runs is None:
            log.warning("%s: its build is gone from the store %s", row.versioned_name, arena.store)
            return None
        launch = launch_command(row.command)
        return EntrantConfig(row.versioned_name, row.command, launch, str(runs), transport=transport)

    def field() -> list[LadderEntrant]:
        active = [e for row in store.active(arena.name) if (e := submitted(row)) is not None]
        return [LadderEntrant(e) for e in (*house.values(), *active)]

    def lookup(name: str) -> EntrantConfig | None:
        if name in house:
            return house[name]
        entrant, _, version = name.rpartition("@")
        for row in store.versions(arena.name, entrant):
            if str(row.version) == version:
                return submitted(row)
        return None

    return field, lookup


def _folders(arena: ArenaConfig, engine: Any) -> dict[str, Path]:
    """Where the arena writes: the disks it watches."""
    folders = {"the match logs": Path(arena.tournament.log_folder), "the bundle store": arena.store}
    if engine.url.get_backend_name() == "sqlite" and engine.url.database:
        folders["the database"] = Path(engine.url.database).parent
    return folders


class _LogFile(logging.FileHandler):
    """The arena's log file. A line it cannot write (its disk full: the arena goes on, paused) is
    lost from the file only, stderr still has it; it is not a "Logging error" traceback."""

    def handleError(self, record: logging.LogRecord) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handleError(record)


@contextmanager
def operator_log(path: Path) -> Iterator[None]:
    """While the arena runs, what it does (submissions, checks, drains, a line every
    ``MATCHES_PER_LINE`` matches) goes to stderr and to ``path``, its log folder's arbiter.log."""
    logger = logging.getLogger("arbiter.arena")
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = _LogFile(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()


def serve(
    arena: ArenaConfig,
    *,
    database: str | None = None,
    web: str | None = None,
    jobs: int | None = None,
    cluster: str | None = None,
    announce: Callable[[str], None] = print,
) -> ServeResult:
    """Run the arena until a stop signal (see the module's docstring)."""
    from arbiter.storage import Repo, open_database, row_id
    from arbiter.storage.arena import ArenaStore

    started = time.perf_counter()
    tournament = arena.tournament if cluster is None else override(arena.tournament, cluster=cluster)
    url = database if database is not None else tournament.database
    engine = open_database(url)
    try:
        repo = Repo(engine)
        known = repo.tournament(arena.name)
        stored = repo.count_matches(row_id(known)) if known is not None else 0
        field, lookup = field_of(arena, ArenaStore(engine))
        disk = DiskWatch(_folders(arena, engine), arena.free_space)
        schedule = ArenaSchedule(tournament, arena.matchmaking, arena.seed, field, lookup, disk)
        host = ArenaHost(arena, url, web or arena.web, schedule, announce)

        def drain(signum: int) -> None:
            log.info(
                "draining: no new set starts; the %d matches in play finish (a second signal stops them)",
                host.in_flight(),
            )
            schedule.drain()

        with operator_log(host.log_file), draining_on_signals(drain, arena.drain_seconds):
            try:
                summary: RunSummary | None = run_tournament(
                    schedule.config, database=url, jobs=jobs, observers=[host], schedule=schedule
                )
            except TournamentInterrupted:
                summary = None
        recorded = repo.tournament(arena.name)
        total = repo.count_matches(row_id(recorded)) if recorded is not None else 0
    finally:
        engine.dispose()
    return ServeResult(
        arena=arena.name,
        web=host.web.address if host.web is not None else "",
        played=summary.played if summary is not None else total - stored,
        recorded_before=stored,
        abandoned=summary is None,
        wall_seconds=time.perf_counter() - started,
    )
