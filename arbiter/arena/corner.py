"""The author's corner (``/me``): an author's own page, in the browser, after entering the token once.

The token is checked once (as the API checks it: arbiter.arena.tokens, failed attempts counted
per address and author) and never kept: the browser gets a session cookie holding the author's
name, its token's id, the author's session epoch, an expiry and a random nonce, signed with
HMAC-SHA256 over the arena's secret (:func:`session_secret`), HttpOnly, SameSite=Strict, Secure
over https. Each request reads the author's row afresh (arbiter.storage.authors): a
session is live only while the author still holds that token, unrevoked, at that epoch. So a
revocation ends it at once, and so does a new token (`arbiter author revoke` then `add`, the way
to replace a lost token): a stolen cookie dies with the token. Logging out adds one to the
epoch: it ends every session of the author, on every browser, and a copy of the cookie with it.

Every POST under ``/me`` must carry the CSRF token of its session (a hidden field: an HMAC of the
session's nonce, compared in constant time) and, when the browser says where the form came from
(``Origin``, else ``Referer``), come from this arena's own origin; anything else is refused with
403 and one line. A visitor without a session gets an anonymous one (no author) at ``GET /me``,
so the login form is protected too; logging in starts a new session (a new nonce). An upload
(``POST /me/submit``) is refused on its head alone, before its body is read, unless it comes
with a live author's session from the arena's own origin.

What the corner shows is the author's alone: its submissions with their check reports (passing
checks folded, failures open; a check in progress shows its end without a reload, on the
arena's events), a form to upload a bot's folder as a .tar.gz or .zip with the command that does
the same from a terminal, retiring a version, and the output of its own bots in their matches,
each linked to its replay (:meth:`ArenaService.stderr_of`: anything else, guessed or not, is 404).
Where the arena seats people (arbiter.arena.play), "Play my bot" (``POST /me/play``) seats the
author against three copies of one of their active versions: every bot decision at that table
is the author's bot's, seen from each seat, and the author's name is in the log.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from arbiter.errors import ArbiterError, StorageError, TokenRefused
from arbiter.files import human_size
from arbiter.lobby.keys import AUTHOR_PREFIX, KEY_ID_BYTES
from arbiter.storage.credentials import AuthorToken
from arbiter.web.html import render

from .browse import arena_title
from .guards import Upload
from .play import COOKIE as TABLE_COOKIE
from .play import SEATS, HumanTables, NoTable, seated
from .service import ArenaService, NotFound
from .tokens import TooManyAttempts
from .views import SubmissionView

COOKIE = "arena_session"
SESSION_SECONDS = 12 * 3600
SECRET_BYTES = 32
MAX_COOKIE = 1024  # a cookie longer than any we set is not read
MAX_TOKEN = 512
STDERR_MATCHES = 20  # per entrant name: the most recent matches listed with their output links
NO_STORE = {"Cache-Control": "no-store"}  # the arena's security headers come with every response (guards)
MatchNumber = Annotated[int, PathParam(ge=1, le=2**63 - 1)]
Csrf = Annotated[str, Form(max_length=200, description="the session's CSRF token")]
TOKEN_SHAPE = f"{AUTHOR_PREFIX}.<{2 * KEY_ID_BYTES} hex digits>.<43 characters>"
REFUSED = "refused: a form of the author's corner must be sent from its own page (reload /me and try again)"


def session_secret(store_folder: Path) -> bytes:
    """The arena's session key: ``session.key`` in its store folder, made (random, mode 0600) on
    first use, so that sessions outlive a restart of ``arbiter serve``."""
    path = store_folder / "session.key"
    try:
        store_folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            fresh = store_folder / f".session.key.{secrets.token_hex(8)}"
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(SECRET_BYTES))
            try:
                os.link(fresh, path)  # all or nothing: a second server starting at once keeps the first key
            except FileExistsError:
                pass
            finally:
                fresh.unlink()
        key = path.read_bytes()
    except OSError as e:
        raise StorageError(f"cannot read or make the arena's session key {path}: {e.strerror or e}") from None
    if len(key) != SECRET_BYTES:
        raise StorageError(
            f"the arena's session key {path} is not {SECRET_BYTES} bytes: delete it (every author logs in again)"
        )
    return key


@dataclass(frozen=True)
class Session:
    """What the cookie holds: the author (empty before logging in), the id of the token it logged
    in with and the author's session epoch then (see the module's docstring), its expiry (Unix
    seconds), and a random nonce the CSRF token is made from."""

    author: str
    token_id: str
    epoch: int
    expires: int
    nonce: str


class Sessions:
    """Signed session cookies and their CSRF tokens over one secret."""

    def __init__(self, secret: bytes):
        if len(secret) < 16:
            raise ValueError("the session secret must be at least 16 bytes")
        self._secret = secret

    def _mac(self, purpose: bytes, data: bytes) -> str:
        digest = hmac.new(self._secret, purpose + b"\0" + data, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def new(self, author: AuthorToken | None = None) -> Session:
        """A new session: an anonymous one, or ``author``'s, logged in with its token."""
        who = (author.name, author.token_id, author.session_epoch) if author is not None else ("", "", 0)
        return Session(*who, int(time.time()) + SESSION_SECONDS, secrets.token_urlsafe(18))

    def encode(self, session: Session) -> str:
        fields = [session.author, session.token_id, session.epoch, session.expires, session.nonce]
        payload = json.dumps(fields, separators=(",", ":")).encode()
        text = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{text}.{self._mac(b'session', text.encode())}"

    def decode(self, cookie: str | None) -> Session | None:
        """The session a cookie holds, if we signed it and it has not expired."""
        if not cookie or len(cookie) > MAX_COOKIE or cookie.count(".") != 1:
            return None
        text, mac = cookie.split(".")
        if not hmac.compare_digest(mac.encode(), self._mac(b"session", text.encode()).encode()):
            return None
        try:
            fields = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (ValueError, binascii.Error):
            return None
        if not isinstance(fields, list) or [type(v) for v in fields] != [str, str, int, int, str]:
            return None  # not one of ours (an older arena's cookie, say): a new session
        session = Session(*fields)
        return session if session.expires > time.time() else None

    def csrf(self, session: Session) -> str:
        return self._mac(b"csrf", session.nonce.encode())

    def csrf_ok(self, session: Session | None, sent: str) -> bool:
        return session is not None and hmac.compare_digest(sent.encode(), self.csrf(session).encode())


def _same_origin(request: Request) -> bool:
    """Whether the browser's word on where the request comes from (Origin, else Referer), when it
    gives one, is this arena's own origin."""
    said = request.headers.get("origin")
    if said is None and (referer := request.headers.get("referer")):
        parts = urlsplit(referer)
        said = f"{parts.scheme}://{parts.netloc}"
    return said is None or said == f"{request.url.scheme}://{request.url.netloc}"


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def _report_steps(report: Any) -> list[dict[str, Any]] | None:
    """A check report's steps as the corner lists them, when it has the shape check-bot gives."""
    steps = report.get("steps") if isinstance(report, dict) else None
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        return None
    return [
        {"name": str(s.get("name", "")), "ok": bool(s.get("ok")), "detail": str(s.get("detail", ""))} for s in steps
    ]


def add_corner(
    app: FastAPI, service: ArenaService, secret: bytes, tables: HumanTables | None = None
) -> dict[str, Upload]:
    """The author's corner's routes on ``app``, sessions signed with ``secret``, its bots played
    at one of ``tables``; its upload route, to be admitted on its head (arbiter.arena.guards)."""
    corner = _Corner(service, Sessions(secret), tables)
    _session_routes(app, corner)
    _author_routes(app, corner)
    if tables is not None:
        _play_route(app, corner, tables)
    return {"/me/submit": Upload(service.upload_limit, corner.admit)}


class _Corner:
    """What the corner's routes share: the service, the sessions, the page and the checks."""

    def __init__(self, service: ArenaService, sessions: Sessions, tables: HumanTables | None):
        self.service = service
        self.sessions = sessions
        self.authors = service.tokens.authors
        self.seats_people = tables is not None and tables.capacity > 0

    def current(self, request: Request) -> Session | None:
        return self.sessions.decode(request.cookies.get(COOKIE))

    def author_of(self, request: Request) -> str | None:
        """The logged-in author, if the session is live (see the module's docstring)."""
        session = self.current(request)
        if session is None or not session.author:
            return None
        return session.author if self.authors.session_live(session.author, session.token_id, session.epoch) else None

    def admit(self, request: Request) -> Response | None:
        """An upload on its head alone: refused unless a live author's session sends it from here."""
        return None if _same_origin(request) and self.author_of(request) is not None else _refused()

    def with_cookie(self, response: Response, request: Request, session: Session) -> Response:
        response.set_cookie(
            COOKIE,
            self.sessions.encode(session),
            max_age=SESSION_SECONDS,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    def page(self, request: Request, message: str = "", status: int = 200, good: bool = False) -> Response:
        """``/me``: the login form, or the author's corner; a visitor without a session gets one.
        ``message``: what to say on top (``good``: a confirmation, else a refusal)."""
        session = self.current(request)
        author = self.author_of(request)
        if session is None or (session.author and author is None):
            session = self.sessions.new()
        views = self.service.submissions_of(author) if author else []
        if not message and author and (received := _received(request, views)) is not None:
            message, good = received, True
        html = render(
            "corner.html",
            arena=self.service.arena,
            site=arena_title(self.service.arena),
            author=author,
            csrf=self.sessions.csrf(session),
            message=message,
            good=good,
            submissions=_submissions(views),
            playable=_playable(views) if self.seats_people else [],
            outputs=_outputs(self.service, author) if author else [],
            upload_limit=human_size(self.service.upload_limit),
            token_shape=TOKEN_SHAPE,
            base_url=str(request.base_url).rstrip("/"),
        )
        response = HTMLResponse(html, status_code=status, headers=NO_STORE)
        return self.with_cookie(response, request, session) if session != self.current(request) else response

    def guarded(self, request: Request, csrf: str, *, logged_in: bool = True) -> bool:
        """Whether a POST may go on: same origin, the session's CSRF token, and (``logged_in``) an author."""
        if not _same_origin(request) or not self.sessions.csrf_ok(self.current(request), csrf):
            return False
        return not logged_in or self.author_of(request) is not None


def _refused() -> Response:
    return PlainTextResponse(REFUSED, status_code=403, headers=NO_STORE)


def _back(query: str = "") -> Response:
    return RedirectResponse(f"/me{query}", status_code=303, headers=NO_STORE)


def _received(request: Request, views: list[SubmissionView]) -> str | None:
    """The confirmation of an upload just made (``/me?submitted=ID``, one of the author's own)."""
    sent = request.query_params.get("submitted", "")
    view = next((v for v in views if sent.isdigit() and v.id == int(sent)), None)
    if view is None:
        return None
    return f"Received {view.name}@{view.version} (submission {view.id}): {view.status}" + (
        "; the check runs now and this page shows its result as soon as it is known."
        if view.status == "checking"
        else "."
    )


def _session_routes(app: FastAPI, corner: _Corner) -> None:
    @app.get("/me", response_class=HTMLResponse, include_in_schema=False)
    def me(request: Request) -> Response:
        return corner.page(request)

    @app.post("/me/login", include_in_schema=False)
    def login(request: Request, token: Annotated[str, Form(max_length=MAX_TOKEN)] = "", csrf: Csrf = "") -> Response:
        if not corner.guarded(request, csrf, logged_in=False):
            return _refused()
        try:
            author = corner.service.tokens.check(token.strip(), _client(request))
        except TooManyAttempts as e:
            response = corner.page(request, str(e), 429)
            response.headers["Retry-After"] = f"{e.retry_after:.0f}"
            return response
        except ArbiterError as e:
            return corner.page(request, str(e), 401 if isinstance(e, TokenRefused) else 400)
        return corner.with_cookie(_back(), request, corner.sessions.new(author))

    @app.post("/me/logout", include_in_schema=False)
    def logout(request: Request, csrf: Csrf = "") -> Response:
        if not corner.guarded(request, csrf, logged_in=False):
            return _refused()
        session = corner.current(request)
        if session is not None and session.author:
            corner.authors.end_sessions(session.author, session.token_id)  # every copy of the cookie dies
        response = _back()
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response


def _author_routes(app: FastAPI, corner: _Corner) -> None:
    service = corner.service

    @app.post("/me/submit", include_in_schema=False)
    def submit(request: Request, bundle: Annotated[UploadFile | None, File()] = None, csrf: Csrf = "") -> Response:
        author = corner.author_of(request)
        if author is None or not corner.guarded(request, csrf):
            return _refused()
        if bundle is None:
            return corner.page(request, "choose your bot's folder as a .tar.gz or .zip to upload", 400)
        try:
            row = service.submit_as(author, bundle.file.read(service.upload_limit + 1))
        except ArbiterError as e:
            return corner.page(request, str(e), 400)
        return _back(f"?submitted={row.id}")

    @app.post("/me/retire", include_in_schema=False)
    def retire(request: Request, name: Annotated[str, Form(max_length=64)] = "", csrf: Csrf = "") -> Response:
        author = corner.author_of(request)
        if author is None or not corner.guarded(request, csrf):
            return _refused()
        try:
            service.retire_as(author, name)
        except ArbiterError as e:
            return corner.page(request, str(e), 400)
        return _back()

    @app.get("/me/matches/{match_id}/stderr/{seat}", include_in_schema=False)
    def stderr(request: Request, match_id: MatchNumber, seat: Annotated[int, PathParam(ge=0, le=3)]) -> Response:
        author = corner.author_of(request)
        try:
            if author is None:
                raise NotFound("no session")
            data = service.stderr_of(author, match_id, seat)
        except NotFound:
            return PlainTextResponse(f"no output of seat {seat} of match {match_id} for you", 404, NO_STORE)
        return Response(data, media_type="text/plain; charset=utf-8", headers=NO_STORE)


def _playable(views: list[SubmissionView]) -> list[str]:
    """The author's active versions (``NAME@VERSION``): those "Play my bot" seats."""
    return [f"{v.name}@{v.version}" for v in views if v.status == "active"]


def _play_route(app: FastAPI, corner: _Corner, tables: HumanTables) -> None:
    @app.post("/me/play", include_in_schema=False)
    def play_mine(request: Request, version: Annotated[str, Form(max_length=80)] = "", csrf: Csrf = "") -> Response:
        author = corner.author_of(request)
        if author is None or not corner.guarded(request, csrf):
            return _refused()
        if version not in _playable(corner.service.submissions_of(author)):
            return corner.page(request, f"{version!r} is not an active version of yours: choose one listed here", 400)
        try:
            key = tables.open(request.cookies.get(TABLE_COOKIE), [version] * SEATS, author=author)
        except NoTable as e:
            return corner.page(request, str(e), e.status)
        return seated(key)


def _submissions(views: list[SubmissionView]) -> list[dict[str, Any]]:
    """Each submission with its report made readable: check-bot's steps, else its text as it is."""
    out = []
    for view in views:
        report, steps = view.report, _report_steps(view.report)
        said = [report[k] for k in ("text", "error") if isinstance(report, dict) and isinstance(report.get(k), str)]
        text = said[0] if said else None
        if text is None and steps is None and report is not None:
            text = report if isinstance(report, str) else json.dumps(report, indent=2, ensure_ascii=False)
        out.append({"view": view, "steps": steps, "text": text})
    return out


def _outputs(service: ArenaService, author: str) -> list[dict[str, Any]]:
    """The author's seats in recent matches (newest first): where each bot's output is read."""
    versions = {(row.entrant, row.version) for row in service.store.by_author(service.arena, author)}
    seats: list[dict[str, Any]] = []
    for name in sorted({name for name, _ in versions}):
        try:
            page = service.matches(entrant=name, limit=STDERR_MATCHES)
        except NotFound:  # never played
            continue
        seats.extend(
            {"match": m.id, "seat": s.seat, "entrant": f"{s.name}@{s.version}", "finished": m.finished_at}
            for m in page.matches
            for s in m.seats
            if (s.name, s.version) in versions
        )
    return sorted(seats, key=lambda s: (-s["match"], s["seat"]))
