"""The tournament lease: one run of a tournament at a time, enforced by its results database.

A run takes the lease (a row of ``tournament_leases``, :class:`~.models.TournamentLease`) before
it reads or writes anything of the tournament, and a second run refuses at once with one line
naming the holder. Taking is atomic on SQLite and PostgreSQL alike: an ``INSERT`` of a new row
(the primary key lets one of two runs win), or an ``UPDATE ... WHERE owner = <seen> AND
heartbeat = <seen>`` of a free or stale row (a compare-and-set: of two runs that saw the same
row, one updates it). Because the database decides, the rule holds across machines.

While it runs, the holder renews ``heartbeat`` every :data:`RENEW_SECONDS` (a thread), and every
match it records renews the row in the same transaction (:meth:`Lease.fence`): a run that lost
its lease cannot record anything. A lease is *stale*, and may be taken over, when its holder has
not renewed it for :data:`STALE_SECONDS` by the database's clock, or at once when the holder ran
on this machine and its process is gone (``kill -9``, a power cut of the run alone). At the end
the holder frees the row (``owner`` empty); the row stays, with its ``folder_key``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, cast, extract, func, insert, select, update
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.sql import ColumnElement
from sqlmodel import Session

from arbiter.errors import LeaseHeld, StorageError
from arbiter.storage.db import first_line
from arbiter.storage.models import TournamentLease, table_of

log = logging.getLogger(__name__)

STALE_SECONDS = 60.0  # a holder silent this long has lost its lease
RENEW_SECONDS = 5.0

TABLE = table_of(TournamentLease)
T = TABLE.c  # columns


# ---- this process ------------------------------------------------------------------------
def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def process_start(pid: int) -> int | None:
    """A process's start time (clock ticks since boot), or None if it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


@dataclass(frozen=True)
class Me:
    host: str
    pid: int
    node: str
    start: int


def me() -> Me:
    host = socket.gethostname()
    pidns = ""
    with contextlib.suppress(OSError):
        pidns = os.readlink("/proc/self/ns/pid")
    node = f"{host}/{_read('/proc/sys/kernel/random/boot_id')}/{pidns}"
    return Me(host, os.getpid(), node, process_start(os.getpid()) or 0)


def clock(engine_or_conn: Engine | Connection) -> ColumnElement[float]:
    """The database's clock as an SQL expression: seconds since the epoch."""
    if engine_or_conn.dialect.name == "sqlite":
        return (func.julianday("now") - 2440587.5) * 86400.0
    return cast(extract("epoch", func.clock_timestamp()), Float)


# ---- the holder, for messages ---------------------------------------------------------------
@dataclass(frozen=True)
class Holder:
    owner: str
    host: str
    pid: int
    node: str
    process_start: int
    taken_at: float
    heartbeat: float
    age: float  # seconds since its last heartbeat, by the database's clock

    def describe(self) -> str:
        since = datetime.fromtimestamp(self.taken_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"pid {self.pid} on host {self.host} (since {since}, last heartbeat {max(0.0, self.age):.0f}s ago)"

    def gone(self, here: Me) -> bool:
        """The holder ran on this machine and its process is no more."""
        if self.node != here.node:
            return False
        start = process_start(self.pid)
        return start is None or (self.process_start != 0 and start != self.process_start)

    def stale(self, here: Me, stale_after: float) -> bool:
        return not self.owner or self.gone(here) or self.age > stale_after


def _holder(row: Row[Any], now: float) -> Holder:
    return Holder(
        row.owner, row.host, row.pid, row.node, row.process_start, row.taken_at, row.heartbeat, now - row.heartbeat
    )


def current_holder(engine: Engine, tournament: str) -> Holder | None:
    """Who holds the tournament's lease now (None: nobody)."""
    with engine.connect() as conn:
        row = conn.execute(select(TABLE).where(T.tournament == tournament)).first()
        if row is None or not row.owner:
            return None
        return _holder(row, conn.execute(select(clock(conn))).scalar_one())


# ---- the lease -------------------------------------------------------------------------------
class Lease:
    """A held lease: renew it (:meth:`keep_alive`), fence writes with it, release it."""

    def __init__(self, engine: Engine, tournament: str, owner: str, folder_key: str, took_over: Holder | None):
        self.engine = engine
        self.tournament = tournament
        self.owner = owner
        self.folder_key = folder_key
        self.took_over = took_over  # the stale holder this run replaced, if any
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def take(cls, engine: Engine, tournament: str, *, stale_after: float | None = None) -> Lease:
        """Take the tournament's lease, or raise LeaseHeld naming who holds it."""
        stale_after = STALE_SECONDS if stale_after is None else stale_after
        here = me()
        owner = f"{here.host}:{here.pid}:{uuid.uuid4().hex[:12]}"
        mine = {"owner": owner, "host": here.host, "pid": here.pid, "node": here.node, "process_start": here.start}
        try:
            for _ in range(20):
                with engine.connect() as conn:
                    row = conn.execute(select(TABLE).where(T.tournament == tournament)).first()
                    now = conn.execute(select(clock(conn))).scalar_one()
                if row is None:
                    key = uuid.uuid4().hex
                    try:
                        with engine.begin() as conn:
                            now_sql = clock(conn)
                            conn.execute(
                                insert(TABLE).values(
                                    tournament=tournament, taken_at=now_sql, heartbeat=now_sql, folder_key=key, **mine
                                )
                            )
                    except IntegrityError:
                        continue  # another run inserted it first: look again
                    return cls(engine, tournament, owner, key, None)
                holder = _holder(row, now)
                if not holder.stale(here, stale_after):
                    raise LeaseHeld(
                        f"tournament {tournament!r} is already being run by {holder.describe()}; this run does not "
                        f"start: wait for that run to end or stop it (a run silent for {stale_after:g}s is taken over)"
                    )
                with engine.begin() as conn:
                    now_sql = clock(conn)
                    done = conn.execute(
                        update(TABLE)
                        .where(T.tournament == tournament, T.owner == row.owner, T.heartbeat == row.heartbeat)
                        .values(taken_at=now_sql, heartbeat=now_sql, **mine)
                    ).rowcount
                if done == 1:
                    key = row.folder_key or uuid.uuid4().hex
                    if not row.folder_key:
                        with engine.begin() as conn:
                            conn.execute(
                                update(TABLE).where(T.tournament == tournament, T.owner == owner).values(folder_key=key)
                            )
                    took_over = holder if row.owner else None
                    if took_over is not None:
                        log.warning("took over the stale lease of tournament %r from %s", tournament, holder.describe())
                    return cls(engine, tournament, owner, key, took_over)
                time.sleep(0.01)  # another run changed the row between our look and our update
        except SQLAlchemyError as e:
            raise StorageError(f"cannot take the lease of tournament {tournament!r}: {first_line(e)}") from None
        raise LeaseHeld(f"tournament {tournament!r}: its lease keeps changing hands; try again")

    # -- renewing
    def _renew(self, conn: Connection | Session) -> bool:
        stmt = (
            update(TABLE)
            .where(T.tournament == self.tournament, T.owner == self.owner)
            .values(heartbeat=clock(self.engine))
        )
        run = conn.exec if isinstance(conn, Session) else conn.execute
        return run(stmt).rowcount == 1

    def renew(self) -> bool:
        """Renew the heartbeat; False (and :attr:`lost`) if another run holds the lease now."""
        with self.engine.begin() as conn:
            ok = self._renew(conn)
        if not ok:
            self.lost = True
        return ok

    def fence(self, session: Session) -> None:
        """Inside a write transaction: renew, or raise StorageError if the lease is not ours
        any more (the transaction is then rolled back, nothing is recorded)."""
        if not self._renew(session):
            self.lost = True
            raise StorageError(self.lost_message())

    def lost_message(self) -> str:
        try:
            holder = current_holder(self.engine, self.tournament)
        except SQLAlchemyError:
            holder = None
        who = f" to {holder.describe()}" if holder else ""
        return (
            f"this run lost the lease of tournament {self.tournament!r}{who} (it was silent for too long); "
            "it stops, and what it recorded stays"
        )

    def check(self) -> None:
        if self.lost:
            raise StorageError(self.lost_message())

    def keep_alive(self) -> Lease:
        """Renew the lease every RENEW_SECONDS in a thread, until :meth:`release`."""

        def run() -> None:
            while not self._stop.wait(RENEW_SECONDS):
                try:
                    if not self.renew():
                        log.error("the lease of tournament %r was taken over by another run", self.tournament)
                        return
                except SQLAlchemyError as e:  # the database is away for a moment: try again
                    log.warning("cannot renew the lease of tournament %r: %s", self.tournament, first_line(e))

        self._thread = threading.Thread(target=run, name=f"lease-{self.tournament}", daemon=True)
        self._thread.start()
        return self

    def release(self) -> None:
        """Stop renewing and free the lease (if still ours)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    update(TABLE).where(T.tournament == self.tournament, T.owner == self.owner).values(owner="")
                )
        except SQLAlchemyError as e:
            log.warning("cannot release the lease of tournament %r: %s", self.tournament, first_line(e))
