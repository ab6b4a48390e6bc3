"""``arbiter serve``: a standing arena in one process, on the one tournament loop.

The main thread runs the loop (arbiter.tournament.loop) with the ladder's schedule
(arbiter.arena.ladder): the arena is a tournament that never ends, recorded, rated, leased and
resumed as tournaments are. Once the loop holds the arena's lease, the :class:`ArenaHost`
observer starts the rest: the API (arbiter.arena.api) served by uvicorn in a thread, and the
:class:`Checker`, which runs each submission through check-bot in a child process of its own,
one at a time, and makes it active or rejected. A version that becomes active, or retires, wakes
the ladder.

The first SIGTERM or Ctrl-C drains: no set starts, the matches in play finish, the run ends
(exit 0). A second signal, or ``drain_seconds`` after the first, stops at once: the matches in
play are abandoned, their logs never written, and a restart plays them again. A check in progress
is abandoned too and done again at the restart.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbiter.arena.config import ArenaConfig
from arbiter.arena.ladder import ArenaSchedule, LadderEntrant, versioned
from arbiter.errors import TournamentInterrupted
from arbiter.model import MatchOutcome
from arbiter.process.limits import Limits
from arbiter.signals import draining_on_signals
from arbiter.tournament.bundle import cached
from arbiter.tournament.config import EntrantConfig, override
from arbiter.tournament.config.environment import launch_command
from arbiter.tournament.loop import Run, RunSummary, run_tournament
from arbiter.tournament.schedule import ScheduledMatch

if TYPE_CHECKING:
    from arbiter.arena.webserver import WebServer

__all__ = ["ArenaHost", "Checker", "ServeResult", "serve"]

log = logging.getLogger(__name__)

CHECK_STOP_SECONDS = 5.0  # for a check in progress to end its bots when the arena stops


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
def _check_in_child(
    conn: Connection, folder: str, command: str, isolation: str, limits: Limits, time_limit: float
) -> None:
    """A child process's whole life: one check. SIGTERM ends it through its clean-up (its bots
    are killed, as after Ctrl-C)."""
    from arbiter.arena.checking import check_submission

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        conn.send(check_submission(Path(folder), command, isolation=isolation, limits=limits, time_limit=time_limit))
    except KeyboardInterrupt:
        pass
    except Exception as e:  # the check itself failed: the author is told so, not left waiting
        conn.send((False, f'{{"ok": false, "error": {str(e)!r}}}'))


class Checker:
    """Checks the submitted versions, one at a time, each in a child process."""

    def __init__(self, arena: ArenaConfig, store: Any, woke: Callable[[], None]):
        self.arena, self.store, self.woke = arena, store, woke
        self.waiting: queue.Queue[int | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="barbu-checker", daemon=True)
        self._child: Any = None
        self._stopping = False

    def start(self) -> None:
        for row in self.store.checking(self.arena.name):  # left unchecked by an earlier run
            self.waiting.put(row.id)
        self._thread.start()

    def enqueue(self, submission_id: int) -> None:
        self.waiting.put(submission_id)

    def stop(self) -> None:
        self._stopping = True
        self.waiting.put(None)
        child = self._child
        if child is not None and child.is_alive():
            child.terminate()  # its clean-up kills its bots; the submission stays `checking`
            child.join(CHECK_STOP_SECONDS)
            if child.is_alive():
                child.kill()
        self._thread.join(CHECK_STOP_SECONDS)

    def _work(self) -> None:
        while not self._stopping:
            submission_id = self.waiting.get()
            if submission_id is None or self._stopping:
                return
            try:
                self._check(submission_id)
            except Exception:  # a broken check must not stop the arena: it is logged, the next goes on
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
        context = multiprocessing.get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        args = (send, str(folder), row.command, str(tournament.isolation or "none"), tournament.limits,
                self.arena.check_time_limit)  # fmt: skip
        self._child = context.Process(target=_check_in_child, args=args, name=f"barbu-check-{submission_id}")
        self._child.start()
        send.close()
        try:
            passed, report = receive.recv()
        except EOFError:  # stopped (or killed): checked again at the next start
            return
        finally:
            self._child.join()
            self._child = None
        if self._stopping:
            return
        decided = self.store.decide(submission_id, bool(passed), report)
        log.info("submission %d (%s): %s", submission_id, decided.versioned_name, decided.status)
        self.woke()


# ---- the arena ------------------------------------------------------------------------------------
class ArenaHost:
    """The observer that runs what surrounds the ladder while the loop holds the lease: the web
    server and the checker; it also counts what is in play for the API."""

    def __init__(
        self, arena: ArenaConfig, url: str | None, web: str, schedule: ArenaSchedule, announce: Callable[[str], None]
    ):
        self.arena, self.url, self.listen, self.schedule, self.announce = arena, url, web, schedule, announce
        self.run: Run | None = None
        self.web: WebServer | None = None
        self.checker: Checker | None = None
        self.engine: Any = None
        from arbiter.arena.events import EventHub  # with the web server's imports: not at the CLI's start

        self.events = EventHub()

    def in_flight(self) -> int:
        run = self.run
        if run is None:
            return 0
        return sum(1 for m in self.schedule.matches if m.number not in run.records)

    def started(self, run: Run) -> None:
        from arbiter.arena.api import create_app
        from arbiter.arena.archive import open_archive
        from arbiter.arena.corner import session_secret
        from arbiter.arena.service import ArenaService
        from arbiter.arena.webserver import WebServer
        from arbiter.tournament.storage import open_database
        from arbiter.tournament.storage.arena import ArenaStore

        self.run = run
        self.engine = open_database(self.url)
        store = ArenaStore(self.engine)
        self.checker = Checker(self.arena, store, self.schedule.changed.set)

        opening = threading.Lock()  # one upload opened at a time: each may take twice its unpacked cap

        def store_archive(data: bytes) -> tuple[str, str, str]:
            with opening:
                unpacked = open_archive(data, self.arena.store, self.arena.uploads)
            return unpacked.digest, unpacked.name, unpacked.command

        service = ArenaService(
            self.engine, self.arena.name, Path(self.arena.tournament.log_folder), store_archive=store_archive,
            enqueue=self.checker.enqueue, house=[e.name for e in self.arena.tournament.entrants],
            in_flight=self.in_flight, upload_limit=self.arena.uploads.archive,
        )  # fmt: skip
        app = create_app(service, hub=self.events, secret=session_secret(self.arena.store))
        self.web = WebServer(app, self.listen, proxies=self.arena.proxies)
        self.web.start()
        self.checker.start()
        self.announce(f"arena {self.arena.name!r}: serving http://{self.web.address} (database {run.database})")

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        self.events.publish({"type": "match", "number": m.number, "status": outcome.status})

    def stopped(self, run: Run) -> None:
        self.events.close()  # open event streams end, so the web server can stop
        if self.checker is not None:
            self.checker.stop()
        if self.web is not None:
            self.web.stop()
        if self.engine is not None:
            self.engine.dispose()


def field_of(
    arena: ArenaConfig, store: Any
) -> tuple[Callable[[], list[LadderEntrant]], Callable[[str], EntrantConfig | None]]:
    """The ladder's active versions (the house's, as ``NAME@1``, and the submitted ones that
    passed their check) and a lookup of any version by its name."""
    house = {versioned(e.name, 1): replace(e, name=versioned(e.name, 1)) for e in arena.tournament.entrants}

    def submitted(row: Any) -> EntrantConfig | None:
        folder = cached(row.bundle, arena.store)
        if folder is None:
            log.warning("%s: its files are gone from the store %s", row.versioned_name, arena.store)
            return None
        return EntrantConfig(row.versioned_name, row.command, launch_command(row.command), str(folder))

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
    from arbiter.tournament.storage import Repo, open_database, row_id
    from arbiter.tournament.storage.arena import ArenaStore

    started = time.perf_counter()
    tournament = arena.tournament if cluster is None else override(arena.tournament, cluster=cluster)
    url = database if database is not None else tournament.database
    engine = open_database(url)
    try:
        repo = Repo(engine)
        known = repo.tournament(arena.name)
        stored = repo.match_rows(row_id(known)) if known is not None else []
        field, lookup = field_of(arena, ArenaStore(engine))
        schedule = ArenaSchedule(tournament, arena.matchmaking, arena.seed, field, lookup, stored)
        host = ArenaHost(arena, url, web or arena.web, schedule, announce)
        with draining_on_signals(lambda signum: schedule.drain(), arena.drain_seconds):
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
        played=summary.played if summary is not None else total - len(stored),
        recorded_before=len(stored),
        abandoned=summary is None,
        wall_seconds=time.perf_counter() - started,
    )
