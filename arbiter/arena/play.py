"""``/play``: a visitor plays the arena's champions in the browser, a match that is never rated.

"Play the champion" seats the visitor against the top three active versions of the leaderboard
(with fewer than three, the best ones again, as copies fill a ladder's table). The match is a
person's table (arbiter.human): played by a match host in the arena's process, under the arena's
rules, limits and isolation and a person's time control, its log written to the ``human``
folder of the arena's log folder. It is never recorded in the database, so it never touches a
rating; ``/play`` lists the finished ones apart, each with its replay.

Limits: at most ``human_tables`` tables play at once (the arena file's key; 0 turns ``/play``
off), so people never take the machine from the ladder, and a browser holds one table at a time
(its cookie names it). A table left idle forfeits by its time control, which releases the bots.

Routes: ``GET /play`` (who you would play, your table if you have one, the finished matches),
``POST /play`` (a new table; 303 to it), ``/play/<key>/…`` (the table: arbiter.human.app),
``GET /play/matches/<name>`` (a finished person's match in the replay viewer).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from arbiter.arena.browse import arena_title
from arbiter.arena.config import ArenaConfig
from arbiter.arena.service import ArenaService
from arbiter.human.app import REPLAY_CSP, new_key, table_app
from arbiter.human.table import HUMAN_TIME, HumanTable, TableSpec
from arbiter.match.play import BotSpec
from arbiter.referee.loop import MatchSetup
from arbiter.tournament.config import EntrantConfig, TournamentConfig
from arbiter.web.html import render, static

__all__ = ["COOKIE", "HumanTables", "add_people", "add_play"]

log = logging.getLogger(__name__)

COOKIE = "barbu_table"
KEEP_SECONDS = 1800.0  # a finished table stays reachable this long, for its summary and replay
LISTED = 20  # finished person's matches listed on /play


@dataclass
class _Open:
    table: HumanTable
    app: Any  # the table's ASGI app
    opened: float


class Busy(Exception):
    """No table can be opened now; the message says why."""


class HumanTables:
    """The arena's person's tables (see the module's docstring)."""

    def __init__(
        self,
        tournament: TournamentConfig,
        service: ArenaService,
        lookup: Callable[[str], EntrantConfig | None],
        capacity: int,
    ):
        self.tournament, self.service, self.lookup, self.capacity = tournament, service, lookup, capacity
        self.folder = Path(tournament.log_folder) / "human"
        self._tables: dict[str, _Open] = {}
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._opened = 0

    def champions(self) -> list[str]:
        """The versions a visitor plays: the top three, the best ones again when fewer."""
        top = [f"{r.name}@{r.version}" for r in self.service.leaderboard().entrants[:3]]
        return [top[i % len(top)] for i in range(3)] if top else []

    def playing(self) -> int:
        with self._lock:
            return sum(not o.table.finished.is_set() for o in self._tables.values())

    def get(self, key: str) -> _Open | None:
        with self._lock:
            return self._tables.get(key)

    def open(self, held: str | None) -> str:
        """A new table for a browser holding table ``held`` (its cookie); Busy if it may not."""
        with self._opening:  # two at once would both see a free table
            return self._open(held)

    def _open(self, held: str | None) -> str:
        self._forget_old()
        if self.capacity == 0:
            raise Busy("this arena has no tables for people (human_tables: 0)")
        mine = self.get(held) if held else None
        if mine is not None and not mine.table.finished.is_set():
            raise Busy("you already have a table in play: finish it (or leave it idle until it forfeits)")
        if self.playing() >= self.capacity:
            raise Busy(f"all {self.capacity} tables for people are taken: try again in a few minutes")
        names = self.champions()
        entrants = [self.lookup(n) for n in names]
        if not names or any(e is None for e in entrants):
            raise Busy("the arena has no active entrant to play yet")
        bots = [e.spec for e in entrants if e is not None]
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self._opened += 1
            number = self._opened
        stamp = time.strftime("%Y%m%d-%H%M%S")
        setup = MatchSetup(self.tournament.rules, seed=time.time_ns() % (1 << 62), match_id=f"human-{stamp}-{number}")
        spec = TableSpec(
            bots=(_named(bots[0], 1), _named(bots[1], 2), _named(bots[2], 3)),
            setup=setup,
            log_path=self.folder / f"{setup.match_id}.jsonl",
            person="visitor",
            time_control=HUMAN_TIME,
            max_strikes=self.tournament.fault_policy.max_strikes,
            isolation=str(self.tournament.isolation or "none"),
            limits=self.tournament.limits,
        )
        table, key = HumanTable(spec), new_key()
        with self._lock:
            self._tables[key] = _Open(table, table_app(table, key), time.monotonic())
        table.start()
        log.info("a person's table %s: a visitor against %s", setup.match_id, ", ".join(names))
        return key

    def _forget_old(self) -> None:
        now = time.monotonic()
        with self._lock:
            old = [k for k, o in self._tables.items() if o.table.finished.is_set() and now - o.opened > KEEP_SECONDS]
            gone = [self._tables.pop(k) for k in old]
        for o in gone:
            o.table.close()

    def finished_matches(self) -> list[str]:
        """The finished person's matches, newest first (their log files' stems)."""
        if not self.folder.is_dir():
            return []
        logs = sorted(self.folder.glob("human-*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [p.name.removesuffix(".jsonl") for p in logs[:LISTED]]

    def close(self) -> None:
        """Stop every table (a stopping arena): the bots are killed, unfinished logs never kept."""
        with self._lock:
            tables, self._tables = list(self._tables.values()), {}
        for o in tables:
            o.table.close()


def _named(bot: BotSpec, seat: int) -> BotSpec:
    return BotSpec(f"{bot.name}#{seat}", bot.command, bot.cwd)


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
    def open_table(request: Request) -> Response:
        try:
            key = tables.open(request.cookies.get(COOKIE))
        except Busy as e:
            return HTMLResponse(render("arena_play_busy.html", title="No table now", reason=str(e)), status_code=409)
        response = RedirectResponse(f"/play/{key}/", status_code=303)
        response.set_cookie(COOKIE, key, httponly=True, samesite="strict", path="/play")
        return response

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


def add_people(
    app: FastAPI, arena: ArenaConfig, service: ArenaService, lookup: Callable[[str], EntrantConfig | None]
) -> HumanTables | None:
    """``/play`` on the arena's app, unless its file turns it off (``human_tables: 0``)."""
    if arena.human_tables == 0:
        return None
    tables = HumanTables(arena.tournament, service, lookup, arena.human_tables)
    add_play(app, tables)
    return tables
