"""The arena's HTTP API (FastAPI; served by uvicorn in ``arbiter serve``), described at ``/openapi.json``.

Reads are open to anyone: the leaderboard, entrants, matches and their logs, submissions'
statuses, the arena's state. Writes (submitting a bot, retiring an entrant) and what belongs to
an author alone (a bot's output in its matches, a submission's check report) need the author's
token as ``Authorization: Bearer TOKEN``. What another author may not see is answered 404, as if
it did not exist.

Every input is bounded before it is used: path parameters and query strings by their types and
lengths, a request body by its declared length before it is read (arbiter.arena.guards: at most
the arena's upload limit on an upload, 64 KiB elsewhere, never chunked), and an upload is refused
on its head alone when its token is missing or wrong. Every response carries the arena's
security headers (a Content-Security-Policy, X-Frame-Options, nosniff), errors too. Every
error is ``{"detail": "one line"}`` with its status: 400 a request that cannot be used, 401 a
missing or wrong token, 403 another's name, 404 nothing (that you may see) there, 409 nothing to
retire, 410 a log that changed since it was recorded, 411 a body without a length, 413 too
large (or over a store quota), 429 too many wrong tokens (or uploads), 500 a failure of the
arena's own (logged; the answer names none of its files), 503 its database unavailable or a disk
short of space; with Retry-After when it is known.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, File, HTTPException, Path, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from arbiter.errors import ArbiterError, NameTaken, StorageError, TokenRefused
from arbiter.tournament.config import NAME_RE

from .browse import arena_title
from .corner import add_corner
from .events import EventHub
from .guards import SECURITY_HEADERS, BodyGuard, SecurityHeaders, Upload, error
from .pages import add_pages, leaderboard_page
from .play import HumanTables, add_play
from .quotas import OverQuota, TooManyUploads
from .service import MAX_PAGE, ArenaService, LogGone, NotFound, NothingToRetire, NotYours, UploadTooLarge
from .snapshots import JSON, Snapshots
from .tokens import TooManyAttempts
from .views import MAX_ID, ArenaState, EntrantView, Leaderboard, MatchDetail, MatchId, MatchPage, Name, SubmissionView

MAX_TOKEN = 512
STATUS: dict[type[ArbiterError], int] = {
    TokenRefused: 401,
    NotYours: 403,
    NameTaken: 403,
    NotFound: 404,
    NothingToRetire: 409,
    LogGone: 410,
    UploadTooLarge: 413,
    OverQuota: 413,
    TooManyAttempts: 429,
    TooManyUploads: 429,
    StorageError: 503,
}
NAME = NAME_RE.pattern
ENTRANT = NAME.removesuffix("$") + r"(@[0-9]{1,9})?$"
SUBMISSIONS = "/api/submissions"

bearer = HTTPBearer(auto_error=False, description="an author's token (`arbiter author add`)")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def _token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    """The bearer token sent, if any (bounded in length)."""
    if credentials is None:
        return None
    if len(credentials.credentials) > MAX_TOKEN:
        raise HTTPException(401, "that is not an author token (too long)")
    return credentials.credentials


def _required_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    token = _token(credentials)
    if token is None:
        raise HTTPException(401, "send your author token as 'Authorization: Bearer TOKEN'")
    return token


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def _answer(e: ArbiterError) -> JSONResponse:
    """An ArbiterError as the API's error answer."""
    status = next((STATUS[k] for k in type(e).__mro__ if k in STATUS), 400)
    retry_after = getattr(e, "retry_after", None)
    headers = {"Retry-After": f"{max(1, round(retry_after))}"} if retry_after is not None else None
    return error(status, str(e), headers)


def create_app(
    service: ArenaService,
    *,
    hub: EventHub | None = None,
    secret: bytes | None = None,
    tables: HumanTables | None = None,
) -> FastAPI:
    """The API over ``service``, with the pages for people and the events they listen to
    (``hub``: what the arena publishes, arbiter.arena.events): one app per arena; with
    ``secret``, the author's corner too (``/me``, its sessions signed with it:
    :func:`arbiter.arena.corner.session_secret`); with ``tables``, people's tables (``/play``,
    arbiter.arena.play), which the entrant pages and the corner open too."""
    app = FastAPI(
        title=arena_title(service.arena),
        summary="A standing ladder of Barbu bots: leaderboard, entrants, matches, submissions",
        docs_url=None,  # FastAPI's interactive pages load scripts from elsewhere: /docs is the arena's own (browse)
        redoc_url=None,
    )
    hub = hub if hub is not None else EventHub()
    snapshots = Snapshots(service, hub, functools.partial(leaderboard_page, service))
    _errors(app)
    _reads(app, service, snapshots)
    _authored(app, service, snapshots)
    add_pages(app, service, hub, snapshots, tables)
    uploads = {SUBMISSIONS: Upload(service.upload_limit, functools.partial(_admit, service))}
    if secret is not None:
        uploads.update(add_corner(app, service, secret, tables))
    if tables is not None:
        add_play(app, tables)
    app.add_middleware(BodyGuard, uploads=uploads)
    app.add_middleware(SecurityHeaders)  # the outermost: it sees every response but a crash's (_errors)
    return app


def _admit(service: ArenaService, request: Request) -> Response | None:
    """``POST /api/submissions`` on its head alone: refused unless it carries an author's token
    (checked and counted as every token is), so no body is read for anyone else."""
    scheme, token = get_authorization_scheme_param(request.headers.get("authorization"))
    sent = (
        HTTPAuthorizationCredentials(scheme=scheme, credentials=token) if scheme.lower() == "bearer" and token else None
    )
    try:
        service.author(_required_token(sent), _client(request))  # as HTTPBearer reads it for the route
    except HTTPException as e:
        return error(e.status_code, str(e.detail))
    except ArbiterError as e:
        return _answer(e)
    return None


def _errors(app: FastAPI) -> None:
    @app.exception_handler(ArbiterError)
    async def arbiter_error(request: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, ArbiterError)
        return _answer(e)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, RequestValidationError)
        first: dict[str, Any] = e.errors()[0] if e.errors() else {}
        where = " ".join(str(part) for part in first.get("loc", ()))
        return error(400, f"{where}: {first.get('msg', 'not valid')}")

    @app.exception_handler(Exception)
    async def crashed(request: Request, e: Exception) -> JSONResponse:
        """A failure of the arena's own (the server logs it), answered in one line that names none
        of its files; this answer leaves outside the middleware, so it carries the headers itself."""
        return error(500, "the arena failed to answer this request; it is logged", SECURITY_HEADERS)


def _reads(app: FastAPI, service: ArenaService, snapshots: Snapshots) -> None:
    @app.get("/api/leaderboard", response_model=Leaderboard, tags=["ladder"])
    async def leaderboard(request: Request) -> Response:
        """Each active entrant, best first (by μ − 3σ). With an ``ETag``: 304 to ``If-None-Match``."""
        return (await snapshots.current()).leaderboard.response(request)

    @app.get("/api/health", tags=["ladder"])
    async def health() -> Response:
        """``{"ok": true}`` while this process serves: what a load balancer or a service manager asks."""
        return Response(b'{"ok":true}', media_type=JSON)

    @app.get("/api/state", response_model=ArenaState, tags=["ladder"])
    async def state(request: Request) -> Response:
        """Matches recorded, in flight, in the last hour; active entrants."""
        return (await snapshots.current()).state.response(request)

    @app.get("/api/entrants/{name}", response_model=EntrantView, tags=["ladder"])
    async def entrant(name: Name, request: Request) -> Response:
        """An entrant's versions, rating history, per-contract scores, recent matches and faults.
        With an ``ETag``: 304 to ``If-None-Match``."""
        return await snapshots.tagged(
            request, f"api {name}", lambda: Response(service.entrant(name).model_dump_json(), media_type=JSON)
        )

    @app.get("/api/matches", response_model=MatchPage, tags=["matches"])
    def matches(
        entrant: Annotated[
            str | None, Query(max_length=80, pattern=ENTRANT, description="NAME or NAME@VERSION")
        ] = None,
        version: Annotated[
            int | None, Query(ge=1, le=10**9, description="the entrant's version (with a bare NAME)")
        ] = None,
        since: Annotated[datetime | None, Query(description="finished at or after (ISO 8601)")] = None,
        until: Annotated[datetime | None, Query(description="finished before (ISO 8601)")] = None,
        before: Annotated[int | None, Query(ge=1, le=MAX_ID, description="ids below this (paging)")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    ) -> MatchPage:
        """Matches, the highest id first, a page at a time: pass `next_before` as `before` for the next."""
        if version is not None:
            if entrant is None or "@" in entrant:
                raise HTTPException(400, "version: give it with a bare entrant NAME (or write NAME@VERSION)")
            entrant = f"{entrant}@{version}"
        return service.matches(entrant=entrant, since=since, until=until, before=before, limit=limit)

    @app.get("/api/matches/{match_id}", response_model=MatchDetail, tags=["matches"])
    def match(match_id: MatchId) -> MatchDetail:
        return service.match(match_id)

    @app.get(
        "/api/matches/{match_id}/log",
        tags=["matches"],
        response_class=Response,
        responses={200: {"content": {"application/jsonl": {}}, "description": "the log, byte for byte"}},
    )
    def match_log(match_id: MatchId) -> Response:
        """The match's JSONL log as recorded (its SHA-256 is checked against the database's)."""
        return Response(service.match_log(match_id), media_type="application/jsonl")


def _authored(app: FastAPI, service: ArenaService, snapshots: Snapshots) -> None:
    @app.get(
        "/api/matches/{match_id}/stderr/{seat}",
        tags=["matches"],
        response_class=Response,
        responses={200: {"content": {"text/plain": {}}, "description": "the seat's bot output"}},
    )
    def stderr(
        request: Request, match_id: MatchId, seat: Annotated[int, Path(ge=0, le=3)], credentials: Credentials
    ) -> Response:
        """What the seat's bot wrote (stdout and stderr): for the author of its entrant only."""
        data = service.stderr(match_id, seat, _token(credentials), _client(request))
        return Response(data, media_type="text/plain")

    @app.post(SUBMISSIONS, response_model=SubmissionView, status_code=201, tags=["submissions"])
    def submit(
        request: Request,
        bundle: Annotated[UploadFile, File(description="the bot's folder as a .tar.gz (`arbiter submit`)")],
        credentials: Credentials,
    ) -> JSONResponse:
        """Submit a bot: it is checked (check-bot, in the sandbox) and joins the ladder if it passes."""
        token = _required_token(credentials)  # checked before the body too (_admit)
        data = bundle.file.read(service.upload_limit + 1)
        row = service.submit(token, data, _client(request))
        view = service.submission(row.id, token, _client(request))
        location = f"/api/submissions/{row.id}"
        return JSONResponse(view.model_dump(mode="json"), status_code=201, headers={"Location": location})

    @app.get("/api/submissions/{submission_id}", response_model=SubmissionView, tags=["submissions"])
    def submission(
        request: Request, submission_id: Annotated[int, Path(ge=1, le=MAX_ID)], credentials: Credentials
    ) -> SubmissionView:
        """A submission's status; its author also sees its check report."""
        return service.submission(submission_id, _token(credentials), _client(request))

    @app.post("/api/entrants/{name}/retire", response_model=SubmissionView, tags=["submissions"])
    def retire(request: Request, name: Name, credentials: Credentials) -> SubmissionView:
        """Retire your entrant: its active version stops playing and keeps its history."""
        token = _required_token(credentials)
        retired = service.retire(name, token, _client(request))
        snapshots.refresh()  # its author's next read sees it gone
        return retired
