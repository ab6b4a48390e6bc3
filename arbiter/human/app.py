"""The table page and its small JSON API, for one :class:`~arbiter.human.table.HumanTable`.

Everything is under the table's secret path (``/<key>/``), so that only the person given the
address plays the seat:

- ``GET /<key>/``: the page (its CSS inline, its script ``/<key>/table.js``; no outside request);
- ``GET /<key>/api/state?after=N``: the table as JSON, once its version is past ``N`` (a long
  poll of at most ``POLL_SECONDS``: the page learns of a change as it happens);
- ``POST /<key>/api/choose`` with ``{"request": ID, "key": KEY}``: the person's choice for
  decision request ``ID``; refused (409) when that request is no longer in hand, (422) when
  ``KEY`` is not one of its legal choices: the page offers only legal ones, and the server takes
  only legal ones;
- ``GET /<key>/replay``: the finished match in the replay viewer, once it is over.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from arbiter.human.seat import Refused
from arbiter.human.table import HumanTable
from arbiter.web.html import Markup, render, static

__all__ = ["POLL_SECONDS", "new_key", "table_app"]

POLL_SECONDS = 20.0
NO_STORE = {"Cache-Control": "no-store"}
# The replay viewer is one self-contained page, its script inline: its own policy, set here so that
# a server that adds one to every response (the arena's) does not forbid that script.
REPLAY_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def new_key() -> str:
    """A table's secret path: hard to guess, fine in a URL."""
    return secrets.token_urlsafe(12)


def table_page() -> str:
    styles = Markup(static("viewer.css") + static("table.css"))
    return render("table.html", title="Barbu table", styles=styles)


def table_app(table: HumanTable, key: str) -> FastAPI:
    """The ASGI app of one table (served by the caller's web server)."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    base = f"/{key}"

    @app.get("/")
    async def root() -> Response:
        return JSONResponse({"error": "this is a Barbu table: open the address it printed"}, status_code=404)

    @app.get(base + "/")
    async def page() -> HTMLResponse:
        return HTMLResponse(table_page(), headers=NO_STORE)

    @app.get(base + "/table.js")
    async def script() -> Response:
        return Response(static("table.js"), media_type="text/javascript; charset=utf-8", headers=NO_STORE)

    @app.get(base + "/api/state")
    async def state(after: int = Query(-1, ge=-1), wait: float = Query(POLL_SECONDS, ge=0, le=POLL_SECONDS)) -> Any:
        return JSONResponse(await table.board.changed(after, wait), headers=NO_STORE)

    @app.post(base + "/api/choose")
    async def choose(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the choice as application/json"}, status_code=415)
        try:
            body = await request.json()
            request_id, choice = int(body["request"]), str(body["key"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'expected {"request": ID, "key": KEY}'}, status_code=400)
        seat = table.invitee.seat
        if seat is None:
            return JSONResponse({"error": "the match has not started"}, status_code=409)
        try:
            seat.choose(request_id, choice)
        except Refused as e:
            stale = "no longer" in str(e)
            return JSONResponse({"error": str(e)}, status_code=409 if stale else 422)
        return JSONResponse({"ok": True})

    @app.get(base + "/replay")
    async def replay() -> Response:
        played = table.played
        if played is None:
            return JSONResponse({"error": "the match is not over yet"}, status_code=404)
        from arbiter.referee.logfile import read_log_lines
        from arbiter.replay.model import load_replay
        from arbiter.web.viewer import render_html

        page, _ = render_html(load_replay(read_log_lines(played.log_path)), seat=table.spec.seat)
        return HTMLResponse(page, headers={**NO_STORE, "Content-Security-Policy": REPLAY_CSP})

    return app
