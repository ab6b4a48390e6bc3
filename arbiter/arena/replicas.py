"""API processes apart from the ladder: ``arbiter serve ARENA.yaml --api-only``.

One process runs the ladder (arbiter.arena.serve: the loop, the checker, its own API); any number
of others serve only the API and the pages against the same PostgreSQL database, so reads grow
by adding processes (or machines) while the ladder stays one. What they need from the ladder's
process reaches them through the database:

* **Live events**: the ladder's process sends each event it publishes as a PostgreSQL
  ``NOTIFY`` on :data:`CHANNEL` (:func:`notify`), with its count of matches in play; every API
  process ``LISTEN`` s (:class:`Listener`) and publishes it to its own open pages, after its
  rendered reads caught up (arbiter.arena.snapshots).
* **Submissions**: an API process stores an upload as every process does (its files in the
  arena's store, a ``checking`` row); the ladder's checker adopts the ``checking`` rows it has
  not seen, and checks each once (arbiter.arena.serve.Checker; it alone checks, as it alone holds
  the arena's lease). The store folder must be the same for all (one machine, or a shared disk).

On SQLite the ladder's process is the only one: an SQLite file serves one machine and its
writers queue, so ``--api-only`` refuses it in one line.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from arbiter.arena.config import ArenaConfig
from arbiter.errors import ConfigError
from arbiter.signals import INTERRUPTS, stop_on_signals

__all__ = ["CHANNEL", "ApiResult", "Listener", "notify", "serve_api"]

log = logging.getLogger(__name__)

CHANNEL = "barbu_arena"
RECONNECT_SECONDS = 2.0  # after a lost LISTEN connection
WAIT_SECONDS = 0.5  # how long the listener waits for a notice before it looks whether it should stop
MAX_PAYLOAD = 7000  # bytes: PostgreSQL's NOTIFY payload is limited to 8000


def is_postgres(engine: Engine) -> bool:
    return engine.url.get_backend_name() == "postgresql"


def notify(engine: Engine, arena: str, event: dict[str, Any], in_flight: int) -> None:
    """Tell the arena's API processes about ``event`` (PostgreSQL; on SQLite there are none).
    A failure is logged: the pages refresh on the next event anyway."""
    if not is_postgres(engine):
        return
    payload = json.dumps({"arena": arena, "event": event, "in_flight": in_flight}, separators=(",", ":"))
    if len(payload) > MAX_PAYLOAD:
        return
    try:
        with engine.connect() as connection:
            connection.execute(text("select pg_notify(:channel, :payload)"), {"channel": CHANNEL, "payload": payload})
            connection.commit()
    except Exception as e:
        log.warning("could not tell the API processes about %s: %s", event, e)


class Listener:
    """``LISTEN`` s on :data:`CHANNEL` in a thread of its own and calls ``heard(event, in_flight)``
    for each event of ``arena``; a lost connection is made again every ``RECONNECT_SECONDS``."""

    def __init__(self, engine: Engine, arena: str, heard: Callable[[dict[str, Any], int], None]):
        self.conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.arena, self.heard = arena, heard
        self._stop = threading.Event()
        self.listening = threading.Event()  # set once a LISTEN is in place
        self._thread = threading.Thread(target=self._run, name="barbu-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self.listening.wait(10)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_SECONDS * 4)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    while not self._stop.is_set():
                        for notice in connection.notifies(timeout=WAIT_SECONDS):
                            self._heard(notice.payload)
            except psycopg.Error as e:
                self.listening.clear()
                log.warning("lost the database's notices (%s); listening again in %.0f s", e, RECONNECT_SECONDS)
                self._stop.wait(RECONNECT_SECONDS)

    def _heard(self, payload: str) -> None:
        try:
            notice = json.loads(payload)
            if notice.get("arena") == self.arena and isinstance(notice.get("event"), dict):
                self.heard(notice["event"], int(notice.get("in_flight", 0)))
        except (ValueError, TypeError) as e:
            log.warning("a notice that is not the arena's: %s", e)


@dataclass
class ApiResult:
    arena: str
    web: str
    wall_seconds: float


def serve_api(
    arena: ArenaConfig, *, database: str | None = None, web: str | None = None, announce: Callable[[str], None] = print
) -> ApiResult:
    """Serve the arena's API and pages from its database until a stop signal (see the module's
    docstring); the ladder runs elsewhere."""
    from arbiter.arena.api import create_app
    from arbiter.arena.corner import session_secret
    from arbiter.arena.events import EventHub
    from arbiter.arena.quotas import Uploads
    from arbiter.arena.service import ArenaService
    from arbiter.arena.webserver import WebServer
    from arbiter.storage import open_database
    from arbiter.storage.arena import ArenaStore

    started = time.perf_counter()
    url = database if database is not None else arena.tournament.database
    engine = open_database(url)
    try:
        if not is_postgres(engine):
            raise ConfigError(
                "--api-only needs the arena on PostgreSQL (--db postgresql+psycopg://...): on SQLite the "
                "ladder's own process serves the API"
            )
        in_flight = [0]
        house = [e.name for e in arena.tournament.entrants]
        store = ArenaStore(engine)
        uploads = Uploads(
            arena.name,
            store,
            arena.store,
            enqueue=lambda submission_id: None,
            house=house,
            limits=arena.uploads,
            quotas=arena.quotas,
        )
        service = ArenaService(
            engine,
            arena.name,
            Path(arena.tournament.log_folder),
            uploads=uploads,
            house=house,
            in_flight=lambda: in_flight[0],
            rating=arena.tournament.rating,
            provisional=arena.tournament.provisional,
        )
        hub = EventHub()

        def heard(event: dict[str, Any], playing: int) -> None:
            in_flight[0] = playing
            hub.publish(event)

        listener = Listener(engine, arena.name, heard)
        server = WebServer(create_app(service, hub=hub, secret=session_secret(arena.store)), web or arena.web)
        listener.start()
        server.start()
        announce(f"arena {arena.name!r}: serving http://{server.address} (the API only)")
        try:
            with stop_on_signals():
                while server.server.started and not server.server.should_exit:
                    time.sleep(0.2)
        except INTERRUPTS:
            pass
        finally:
            hub.close()
            server.stop()
            listener.stop()
        return ApiResult(arena.name, server.address, time.perf_counter() - started)
    finally:
        engine.dispose()
