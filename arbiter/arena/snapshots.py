"""Reads at the cost of a trivial route: what every visitor asks for, rendered once per change.

The leaderboard (JSON), the arena's state (JSON) and the leaderboard page are the same for every
client until a match is recorded, a version joins or leaves, or the arena pauses. A thread of
their own (:class:`Snapshots`) renders each into bytes (and gzip) when that happens, and the
``async`` routes hand those bytes out from memory: no query, no validation, no template per
request, and no request waits behind a computation (one that arrives meanwhile gets the last
rendering). Every such answer carries an ``ETag``; a client that sends it back in
``If-None-Match`` gets 304.

What changes them comes two ways. Events (a match recorded: arbiter.arena.events) pass through
here on their way to the open pages: they are sent on once the new rendering is in place, so a
page that fetches ``/`` on an event sees the match. And while anyone reads, the thread looks at
the arena's :meth:`stamp` every ``REFRESH_SECONDS`` (matches recorded, active versions, the
latest decision on a submission, the pause): a version made active by the checker, a retirement,
the matches in play. When nobody has read for ``IDLE_SECONDS`` the thread ends, and the next read
starts it again.

An entrant's JSON and page are rendered on the first request after a change, tagged with that
stamp, and kept until the stamp moves (the requests that arrive while it renders wait for that
one rendering): a client whose ``If-None-Match`` is the current stamp's gets 304 without a query,
and the others get the kept bytes.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy import func
from sqlmodel import select

from arbiter.storage.models import Submission

from .events import EventHub
from .service import ArenaService
from .views import ArenaState, Leaderboard

__all__ = ["Snapshot", "Snapshots"]

log = logging.getLogger(__name__)

REFRESH_SECONDS = 1.0  # how stale the state (matches in play) may be while anyone reads
IDLE_SECONDS = 60.0  # no read for this long: the thread stops looking
KEPT_ANSWERS = 256  # entrants' renderings kept at once (the least recently made go first)
GZIP_FROM = 1024  # bytes: smaller bodies are sent as they are
JSON = "application/json"
HTML = "text/html; charset=utf-8"
REVALIDATE = {"Cache-Control": "no-cache"}  # a cache may keep it, and asks (If-None-Match) before using it


def _tag(data: bytes) -> str:
    return '"' + hashlib.blake2b(data, digest_size=12).hexdigest() + '"'


def _fresh(request: Request, etag: str) -> bool:
    """Whether the client's ``If-None-Match`` names ``etag`` (a weak comparison, as for a GET)."""
    sent = request.headers.get("if-none-match")
    if not sent:
        return False
    bare = etag.removeprefix("W/")
    return sent.strip() == "*" or any(t.strip().removeprefix("W/") == bare for t in sent.split(","))


def _accepts_gzip(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.partition(";")
        if coding.strip().lower() == "gzip":
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={"ETag": etag, **REVALIDATE})


@dataclass(frozen=True)
class Snapshot:
    """One rendered answer: its bytes, their gzip (for a large one) and its ``ETag``."""

    body: bytes
    media_type: str
    etag: str
    gzipped: bytes | None = None

    @classmethod
    def of(cls, body: bytes, media_type: str, etag: str | None = None) -> Snapshot:
        packed = gzip.compress(body, 6, mtime=0) if len(body) >= GZIP_FROM else None
        return cls(body, media_type, etag or _tag(body), packed)

    def response(self, request: Request) -> Response:
        if _fresh(request, self.etag):
            return not_modified(self.etag)
        headers = {"ETag": self.etag, "Vary": "Accept-Encoding", **REVALIDATE}
        if self.gzipped is not None and _accepts_gzip(request):
            headers["Content-Encoding"] = "gzip"
            return Response(self.gzipped, media_type=self.media_type, headers=headers)
        return Response(self.body, media_type=self.media_type, headers=headers)


@dataclass(frozen=True)
class _Rendered:
    stamp: tuple[Any, ...]
    tag: str  # the stamp's, for the answers computed per request
    leaderboard: Snapshot
    page: Snapshot
    state: Snapshot


class Snapshots:
    """The arena's rendered reads (see the module's docstring), kept current by a thread of their
    own. ``page(leaderboard, state)`` renders the leaderboard page. Events published on ``hub`` reach its streams
    after the rendering they cause."""

    def __init__(
        self,
        service: ArenaService,
        hub: EventHub,
        page: Callable[[Leaderboard, ArenaState], str],
        refresh_seconds: float = REFRESH_SECONDS,
    ):
        self.service, self.hub, self._page, self.refresh_seconds = service, hub, page, refresh_seconds
        self._rendered: _Rendered | None = None
        self._lock = threading.Lock()  # the fields below
        self._pending: list[dict[str, Any]] = []
        self._thread: threading.Thread | None = None
        self._last_read = time.monotonic()
        self._wake = threading.Event()
        self._rendering = threading.Lock()  # one rendering at a time
        # per key (an entrant's JSON or page): the stamp's tag and its rendering, the oldest first
        self._answers: dict[str, tuple[str, asyncio.Future[Snapshot | Response]]] = {}
        hub.gate(self._arrived)

    # ---- what the routes call -----------------------------------------------------------------
    async def current(self) -> _Rendered:
        """The latest rendering (made now, off the event loop, when there is none yet)."""
        self._read()
        rendered = self._rendered
        if rendered is None:
            rendered = await asyncio.to_thread(self.refresh)
        return rendered

    async def tagged(self, request: Request, key: str, answer: Callable[[], Response]) -> Response:
        """The answer ``answer()`` gives (rendered in a worker thread once per stamp and ``key``,
        then kept) with the stamp's tag, or 304 if the client holds it. An answer other than
        200 (a missing entrant) is not kept."""
        tag = (await self.current()).tag  # read before the answer: a change meanwhile changes the tag
        if _fresh(request, tag):
            return not_modified(tag)
        kept = self._answers.get(key)
        if kept is None or kept[0] != tag or kept[1].get_loop() is not asyncio.get_running_loop():
            kept = (tag, asyncio.ensure_future(asyncio.to_thread(self._answer, answer, tag)))
            self._answers[key] = kept
            while len(self._answers) > KEPT_ANSWERS:
                del self._answers[next(iter(self._answers))]
        try:
            made = await asyncio.shield(kept[1])
        except BaseException:
            self._forget(key, kept)
            raise
        if isinstance(made, Snapshot):
            return made.response(request)
        self._forget(key, kept)
        return made

    @staticmethod
    def _answer(answer: Callable[[], Response], tag: str) -> Snapshot | Response:
        response = answer()
        if response.status_code != 200:
            return response
        return Snapshot.of(bytes(response.body), response.media_type or JSON, tag)

    def _forget(self, key: str, kept: tuple[str, asyncio.Future[Snapshot | Response]]) -> None:
        if self._answers.get(key) is kept:
            del self._answers[key]

    def refresh(self, *, full: bool = True) -> _Rendered:
        """Render again now (``full``: the leaderboard and its page too, else only when the
        stamp moved); the routes serve the result from now on."""
        with self._rendering:
            state = self.service.state()
            stamp = self.stamp(state.matches, state.paused)
            old = self._rendered
            state_bytes = Snapshot.of(state.model_dump_json().encode(), JSON)
            if old is not None and not full and old.stamp == stamp:
                rendered = old
                if old.state.body != state_bytes.body:
                    rendered = _Rendered(old.stamp, old.tag, old.leaderboard, old.page, state_bytes)
            else:
                leaderboard = self.service.leaderboard()
                board = Snapshot.of(leaderboard.model_dump_json().encode(), JSON)
                page = Snapshot.of(self._page(leaderboard, state).encode(), HTML)
                rendered = _Rendered(stamp, "W/" + _tag(repr(stamp).encode()), board, page, state_bytes)
            self._rendered = rendered
            return rendered

    def stamp(self, matches: int, paused: str | None) -> tuple[Any, ...]:
        """What changes whenever any read here may: matches recorded, the active versions and
        their authors, the latest submission and decision, the pause."""
        service = self.service
        with service.repo.reading(f"arena {service.arena!r}"), service.repo.session() as s:
            submissions = s.exec(
                select(func.count(), func.max(Submission.decided_at), func.max(Submission.retired_at)).where(
                    Submission.arena == service.arena
                )
            ).one()
        return matches, tuple(sorted(service.active().items(), key=str)), tuple(map(str, submissions)), paused

    # ---- the thread ---------------------------------------------------------------------------
    def _arrived(self, event: dict[str, Any] | None) -> None:
        """An event for the open pages: sent on after the rendering it causes (None: closing)."""
        if event is None:
            self.hub.deliver(None)
            return
        with self._lock:
            self._pending.append(event)
        self._start()
        self._wake.set()

    def _read(self) -> None:
        with self._lock:
            self._last_read = time.monotonic()
        self._start()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="barbu-snapshots", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.refresh_seconds)
            self._wake.clear()
            with self._lock:
                events, self._pending = self._pending, []
                if not events and time.monotonic() - self._last_read > IDLE_SECONDS:
                    self._thread = None
                    return
            try:
                self.refresh(full=bool(events))
            except Exception as e:  # the last rendering stays served; the next turn tries again
                log.warning("rendering the arena's leaderboard failed: %s", e)
            for event in events:
                self.hub.deliver(event)
