"""``/play``: a person plays the arena's bots in the browser, a match that is never rated.

Three ways to a table: "Take a seat" on ``/play`` seats the visitor against the top three active
versions of the leaderboard (with fewer than three, the best ones again, as copies fill a ladder's
table); an entrant's page seats them with three active versions of their choice (the ``seat``
fields of ``POST /play``, in seat order); an author's corner seats the author against three copies
of one of their own active versions (arbiter.arena.corner). The match is a person's table
(arbiter.human): played by a match host in the arena's process, under the arena's rules, limits
and isolation and a person's time control, its log written to the ``human`` folder of the arena's
log folder, which keeps the newest ``KEPT_LOGS`` (opening a table deletes the older ones). It is
never recorded in the database, so it never touches a rating; ``/play`` lists the finished ones
apart, each with its replay.

Limits: at most ``human_tables`` tables play at once (the arena file's key; with 0, ``/play`` says
so and seats no one), so people never take the machine from the ladder; a browser holds one table
at a time (its cookie names it), and so does an author. A table left idle forfeits by its time
control, which releases the bots.

Routes: ``GET /play`` (who you would play, your table if you have one, the finished matches),
``POST /play`` (a new table; 303 to it), ``/play/<key>/…`` (the table: arbiter.human.app),
``GET /play/matches/<name>`` (a finished person's match in the replay viewer).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Form, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from arbiter.arena.browse import arena_title
from arbiter.arena.service import ArenaService
from arbiter.human.app import REPLAY_CSP, new_key, table_app
from arbiter.human.table import HUMAN_TIME, HumanTable, TableSpec
from arbiter.match.play import BotSpec
from arbiter.referee.loop import MatchSetup
from arbiter.tournament.config import EntrantConfig, TournamentConfig
from arbiter.web.html import render, static

__all__ = ["COOKIE", "BadPick", "Busy", "HumanTables", "NoTable", "add_play", "refusal", "seated"]

log = logging.getLogger(__name__)

COOKIE = "barbu_table"
KEEP_SECONDS = 1800.0  # a finished table stays reachable this long, for its summary and replay
LISTED = 20  # finished person's matches listed on /play
KEPT_LOGS = 1000  # person's match logs kept in the human folder: the older ones go
VISITOR = "visitor"  # the person's name in the log, unless an author plays from their corner
SEATS = 3
MAX_VERSION = 80  # the most of a chosen version's text an error repeats


class NoTable(Exception):
    """No table is opened; the message says why, ``status`` is the HTTP answer."""

    status = 409


class Busy(NoTable):
    """No table can be opened now (the tables are taken, the person has one, nobody to play)."""


class BadPick(NoTable):
    """The versions chosen cannot be seated (not three, or not active)."""

    status = 400


@dataclass
class _Open:
    table: HumanTable
    app: Any  # the table's ASGI app
    opened: float
    author: str | None


class HumanTables:
    """The arena's person's tables (see the module's docstring); ``kept``: the logs kept."""

    def __init__(
        self,
        tournament: TournamentConfig,
        service: ArenaService,
        lookup: Callable[[str], EntrantConfig | None],
        capacity: int,
        kept: int = KEPT_LOGS,
    ):
        self.tournament, self.service, self.lookup, self.capacity = tournament, service, lookup, capacity
        self.kept = kept
        self.folder = Path(tournament.log_folder) / "human"
        self._tables: dict[str, _Open] = {}
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._opened = 0

    def choices(self) -> list[str]:
        """The versions a person may choose: the active ones, in the leaderboard's order."""
        return [f"{r.name}@{r.version}" for r in self.service.leaderboard().entrants]

    def champions(self) -> list[str]:
        """The versions a visitor plays: the top three, the best ones again when fewer."""
        top = self.choices()[:SEATS]
        return [top[i % len(top)] for i in range(SEATS)] if top else []

    def playing(self) -> int:
        with self._lock:
            return sum(not o.table.finished.is_set() for o in self._tables.values())

    def get(self, key: str) -> _Open | None:
        with self._lock:
            return self._tables.get(key)

    def open(self, held: str | None, versions: Sequence[str] | None = None, author: str | None = None) -> str:
        """A new table for a browser holding table ``held`` (its cookie), and ``author`` when an
        author opens it from their corner, against ``versions`` (three active ones, in seat
        order; the champions when None): its key. NoTable if it may not."""
        with self._opening:  # two at once would both see a free table
            self._forget_old()
            self._refuse_if_busy(held, author)
            names = self.champions() if versions is None else self._picked(versions)
            bots = self._bots(names)
            table = HumanTable(self._spec(bots, author or VISITOR))
            key = new_key()
            with self._lock:
                self._tables[key] = _Open(table, table_app(table, key), time.monotonic(), author)
            table.start()
            log.info(
                "a person's table %s: %s against %s", table.spec.setup.match_id, author or VISITOR, ", ".join(names)
            )
            return key

    def _refuse_if_busy(self, held: str | None, author: str | None) -> None:
        if self.capacity == 0:
            raise Busy("this arena has no tables for people (human_tables: 0)")
        with self._lock:
            live = [(k, o) for k, o in self._tables.items() if not o.table.finished.is_set()]
        if any(k == held or (author is not None and o.author == author) for k, o in live):
            raise Busy("you already have a table in play: finish it (or leave it idle until it forfeits)")
        if len(live) >= self.capacity:
            raise Busy(f"all {self.capacity} tables for people are taken: try again in a few minutes")

    def _picked(self, versions: Sequence[str]) -> list[str]:
        """Three chosen versions, each of them active (BadPick, naming the first that is not)."""
        if len(versions) != SEATS:
            raise BadPick(f"choose {SEATS} versions, one for each bot's seat (you chose {len(versions)})")
        active = set(self.service.active())
        wrong = next((v for v in versions if v not in active), None)
        if wrong is not None:
            raise BadPick(
                f"{wrong[:MAX_VERSION]!r} is not an active version of this arena: choose among those its "
                "leaderboard lists (checked, neither retired nor rejected)"
            )
        return list(versions)

    def _bots(self, names: list[str]) -> list[BotSpec]:
        if not names:
            raise Busy("the arena has no active entrant to play yet")
        bots = []
        for seat, name in enumerate(names, 1):
            entrant = self.lookup(name)
            if entrant is None:
                raise Busy(f"{name} cannot be played now: its files are gone from the arena's store")
            bots.append(BotSpec(f"{entrant.spec.name}#{seat}", entrant.spec.command, entrant.spec.cwd))
        return bots

    def _spec(self, bots: list[BotSpec], person: str) -> TableSpec:
        """The table's match: numbered in this process, its log in the human folder (kept trimmed)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self._logs()[self.kept - 1 :]:
            old.unlink(missing_ok=True)
        with self._lock:
            self._opened += 1
            number = self._opened
        stamp = time.strftime("%Y%m%d-%H%M%S")
        setup = MatchSetup(self.tournament.rules, seed=time.time_ns() % (1 << 62), match_id=f"human-{stamp}-{number}")
        return TableSpec(
            bots=(bots[0], bots[1], bots[2]),
            setup=setup,
            log_path=self.folder / f"{setup.match_id}.jsonl",
            person=person,
            time_control=HUMAN_TIME,
            max_strikes=self.tournament.fault_policy.max_strikes,
            isolation=str(self.tournament.isolation or "none"),
            limits=self.tournament.limits,
        )

    def _forget_old(self) -> None:
        now = time.monotonic()
        with self._lock:
            old = [k for k, o in self._tables.items() if o.table.finished.is_set() and now - o.opened > KEEP_SECONDS]
            gone = [self._tables.pop(k) for k in old]
        for o in gone:
            o.table.close()

    def _logs(self) -> list[Path]:
        """The person's match logs, newest first."""
        if not self.folder.is_dir():
            return []
        stamped = []
        for path in self.folder.glob("human-*.jsonl"):
            try:
                stamped.append((path.stat().st_mtime, path))
            except FileNotFoundError:  # deleted meanwhile
                continue
        return [path for _, path in sorted(stamped, reverse=True)]

    def finished_matches(self) -> list[str]:
        """The finished person's matches, newest first (their log files' stems)."""
        return [p.name.removesuffix(".jsonl") for p in self._logs()[:LISTED]]

    def close(self) -> None:
        """Stop every table (a stopping arena): the bots are killed, unfinished logs never kept."""
        with self._lock:
            tables, self._tables = list(self._tables.values()), {}
        for o in tables:
            o.table.close()


def seated(key: str) -> Response:
    """The answer that takes a browser to its new table, whose key its cookie now holds."""
    response = RedirectResponse(f"/play/{key}/", status_code=303)
    response.set_cookie(COOKIE, key, httponly=True, samesite="strict", path="/")  # read by /play and /me/play
    return response


def refusal(e: NoTable) -> HTMLResponse:
    """The page that says why no table was opened."""
    return HTMLResponse(render("arena_play_busy.html", title="No table now", reason=str(e)), status_code=e.status)


def add_play(app: FastAPI, tables: HumanTables) -> None:
    """The routes of the module's docstring, on the arena's app."""

    @app.get("/play", response_class=HTMLResponse, include_in_schema=False)
    def play_page(request: Request) -> HTMLResponse:
        held = request.cookies.get(COOKIE)
        mine = tables.get(held) if held else None
        return HTMLResponse(
            render(
                "arena_play.html",
                title=f"Play — {arena_title(tables.service.arena)}",
                arena=tables.service.arena,
                champions=tables.champions(),
                capacity=tables.capacity,
                playing=tables.playing(),
                mine=held if mine is not None and not mine.table.finished.is_set() else None,
                matches=tables.finished_matches(),
                time_control=HUMAN_TIME,
                styles=static("arena.css"),
            )
        )

    @app.post("/play", include_in_schema=False)
    def open_table(request: Request, seat: Annotated[list[str] | None, Form()] = None) -> Response:
        try:
            key = tables.open(request.cookies.get(COOKIE), seat or None)
        except NoTable as e:
            return refusal(e)
        return seated(key)

    @app.get("/play/matches/{name}", response_class=HTMLResponse, include_in_schema=False)
    def finished(name: str = PathParam(pattern=r"^human-[0-9]{8}-[0-9]{6}-[0-9]+$")) -> Response:
        from arbiter.referee.logfile import read_log_lines
        from arbiter.replay.model import load_replay
        from arbiter.web.viewer import render_html

        path = tables.folder / f"{name}.jsonl"
        if not path.is_file():
            return HTMLResponse("no such match", status_code=404)
        page, _ = render_html(load_replay(read_log_lines(path)))
        return HTMLResponse(page, headers={"Content-Security-Policy": REPLAY_CSP})

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        """``/play/<key>/…``: the table's own app, with the path below ``/play``."""
        path, root = scope.get("path", ""), scope.get("root_path", "")
        below = path[len(root) :] if root and path.startswith(root) else path
        key = below.split("/")[1] if scope["type"] == "http" and below.count("/") >= 2 else ""
        found = tables.get(key)
        if found is None:
            response = HTMLResponse("no such table (it ended long ago, or never was)", status_code=404)
            await response(scope, receive, send)
            return
        await found.app(scope, receive, send)

    app.mount("/play", dispatch)
