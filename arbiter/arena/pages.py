"""The arena's pages for people: the leaderboard (``/``), an entrant (``/entrants/{name}``, with a
form to sit at a table with it: arbiter.arena.play) and a match's replay (``/matches/{id}``),
served beside the API by the same app, with the pages to find one's way (arbiter.arena.browse:
every match, the matches in play, the API's docs); every page has the same navigation
(``templates/_arena.html``).

Each page is rendered on the server from :class:`arbiter.arena.service.ArenaService` with the
report's templates, styles and chart (arbiter.web), so it is complete with JavaScript off. The
leaderboard's small script (``static/arena.js``) sorts the table and, on each event of
``/api/events`` (arbiter.arena.events), fetches the page again and swaps in its table and the
arena's state: one rendering, on the server. A page holds its styles and data; its script is
one of the arena's own files (``/static/arena.js``, ``/static/viewer.js``), never inline, so its
Content-Security-Policy (arbiter.arena.guards) runs no other script and lets it fetch from the
arena alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from arbiter.errors import ArbiterError
from arbiter.tournament.ratings import MU, SIGMA
from arbiter.web.chart import axes
from arbiter.web.html import json_for_script, render, static
from arbiter.web.report.build import DASHES, PALETTE
from arbiter.web.report.render import Chart, chart, cls, num, plural

from .browse import add_browse, arena_title
from .events import EventHub, add_events
from .play import SEATS, HumanTables
from .service import ArenaService, LogGone, NotFound
from .shaping import split_version
from .snapshots import Snapshot, Snapshots
from .views import ArenaState, EntrantView, Leaderboard, MatchId, MatchSummary, Name

SPARK = (96, 26)  # a leaderboard trend line's box, pixels
HEAD_TO_HEAD = 8  # opponents shown on an entrant's page, the most frequent first
FORMATS = {"num": num, "cls": cls, "plural": plural}
SCRIPTS = ("arena.js", "viewer.js")  # the scripts of the pages served here, at /static/NAME


@dataclass
class Opponent:
    """How an entrant fared against one opponent version in the matches they shared."""

    name: str
    version: int
    matches: int = 0
    ahead: int = 0  # matches where the entrant placed better (its seats' mean place)
    diff: float = 0.0  # summed difference of mean totals per match

    @property
    def mean_diff(self) -> float:
        return self.diff / self.matches if self.matches else 0.0


def sparkline(values: Sequence[float]) -> str | None:
    """The points of a small μ trend line, or None for fewer than two values."""
    if len(values) < 2:
        return None
    lo, hi = min(values), max(values)
    if hi - lo < 0.5:
        lo, hi = lo - 0.25, hi + 0.25
    a = axes(lo, hi, len(values) - 1, SPARK, (2, 2, 3, 3))
    return " ".join(f"{a.x(i):.1f},{a.y(v):.1f}" for i, v in enumerate(values))


def head_to_head(name: str, matches: Sequence[MatchSummary]) -> list[Opponent]:
    """Against each other version met in ``matches``: shared matches, how often ``name`` placed
    ahead, its mean score difference; the most frequent opponents first."""
    out: dict[tuple[str, int], Opponent] = {}
    for m in matches:
        if m.status != "complete":
            continue
        own = [s for s in m.seats if s.name == name]
        if not own:
            continue
        place = sum(s.place for s in own) / len(own)
        total = sum(s.total for s in own) / len(own)
        others: dict[tuple[str, int], list[Any]] = {}
        for s in m.seats:
            if s.name != name:
                others.setdefault((s.name, s.version), []).append(s)
        for key, seats in others.items():
            o = out.setdefault(key, Opponent(*key))
            o.matches += 1
            o.ahead += place < sum(s.place for s in seats) / len(seats)
            o.diff += total - sum(s.total for s in seats) / len(seats)
    ranked = sorted(out.values(), key=lambda o: (-o.matches, o.name, o.version))
    return ranked[:HEAD_TO_HEAD]


def history_chart(view: EntrantView) -> tuple[Chart, dict[int, str]]:
    """The entrant's rating history, one line per version (x: the ladder's match id), each from
    μ₀ where it joined: just before its first rated game."""
    versions = [v.version for v in view.versions]
    series: dict[str, list[list[float]]] = {}
    for p in view.history:
        line = series.setdefault(f"{view.name}@{p.version}", [])
        if not line:
            line.append([max(0, p.match_number - 1), MU, SIGMA])
        line.append([p.match_number, p.mu, p.sigma])
    order = [f"{view.name}@{v}" for v in versions if f"{view.name}@{v}" in series]
    colours = {e: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]) for i, e in enumerate(order)}
    x_max = max((int(p[0]) for s in series.values() for p in s), default=1)
    by_version = {split_version(e)[1]: colours[e][0] for e in order}
    return chart(series, order, colours, x_max), by_version


def _page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **FORMATS, **context), status_code=status)


def _missing(arena: str, e: ArbiterError, status: int = 404) -> HTMLResponse:
    return _page("arena_missing.html", status, arena=arena, title="Not here", message=str(e))


def seating(tables: HumanTables | None, view: EntrantView) -> dict[str, Any] | None:
    """The entrant page's form to sit with it: the active versions to choose from, and the
    seats as first offered (the entrant, then the best of the others; copies when too few);
    None where the arena seats no people."""
    if tables is None or tables.capacity == 0:
        return None
    choices = tables.choices()
    own = f"{view.name}@{view.active_version}"
    if view.active_version is None or own not in choices:
        return {"choices": choices, "picked": []}
    picked = [own, *(c for c in choices if c != own)][:SEATS]
    return {"choices": choices, "picked": picked + [own] * (SEATS - len(picked))}


def leaderboard_page(service: ArenaService, board: Leaderboard, state: ArenaState) -> str:
    """The leaderboard page (rendered once per change: arbiter.arena.snapshots)."""
    trends = service.trends()
    sparks = {(r.name, r.version): sparkline(trends.get(f"{r.name}@{r.version}", [])) for r in board.entrants}
    return render(
        "arena_leaderboard.html",
        **FORMATS,
        arena=service.arena,
        title=f"Leaderboard — {arena_title(service.arena)}",
        board=board,
        state=state,
        sparks=sparks,
        provisional=service.provisional,
    )


def add_pages(
    app: FastAPI, service: ArenaService, hub: EventHub, snapshots: Snapshots, tables: HumanTables | None = None
) -> None:
    """The pages, and the events the leaderboard listens to, on ``app``; the leaderboard page is
    served as ``snapshots`` last rendered it; an entrant's page offers to sit with it at one of
    ``tables``."""
    add_events(app, hub)
    arena = service.arena
    add_browse(
        app,
        service,
        lambda template, **context: _page(template, arena=arena, **context),
        lambda e, status: _missing(arena, e, status),
    )

    scripts = {name: Snapshot.of(static(name).encode(), "text/javascript; charset=utf-8") for name in SCRIPTS}

    @app.get("/static/{name}", include_in_schema=False)
    async def script(name: str, request: Request) -> Response:
        if name not in scripts:
            raise NotFound("no such file here: the pages' scripts are /static/arena.js and /static/viewer.js")
        return scripts[name].response(request)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def leaderboard(request: Request) -> Response:
        return (await snapshots.current()).page.response(request)

    def entrant_page(name: str) -> HTMLResponse:
        try:
            view = service.entrant(name)
        except ArbiterError as e:
            return _missing(arena, e)
        rating_chart, colours = history_chart(view)
        return _page(
            "arena_entrant.html",
            arena=arena,
            title=f"{name} — {arena_title(arena)}",
            e=view,
            chart=rating_chart,
            colours=colours,
            opponents=head_to_head(name, view.recent_matches),
            seating=seating(tables, view),
        )

    @app.get("/entrants/{name}", response_class=HTMLResponse, include_in_schema=False)
    async def entrant(name: Name, request: Request) -> Response:
        return await snapshots.tagged(request, f"page {name}", lambda: entrant_page(name))

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match(match_id: MatchId) -> HTMLResponse:
        from arbiter.replay.model import load_replay
        from arbiter.web.viewer import build_data

        try:
            detail = service.match(match_id)
            log = service.match_log(match_id)
        except ArbiterError as e:
            return _missing(arena, e, 410 if isinstance(e, LogGone) else 404)
        replay = load_replay(log.decode("utf-8").splitlines(keepends=True))
        data = build_data(replay)
        return _page(
            "arena_match.html",
            arena=arena,
            title=f"Match {detail.id} — {arena_title(arena)}",
            m=detail,
            data=json_for_script(data),
        )
