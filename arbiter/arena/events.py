"""What the arena pushes to open pages: server-sent events at ``GET /api/events``.

The loop's thread calls :meth:`EventHub.publish` when a match is recorded; every open stream
gets the event as one ``data:`` line of JSON. An event is a JSON object with a ``type``:

- ``{"type": "match", "id": N, "status": "complete" | "aborted"}``: the ladder's match
  ``N`` is recorded (its ratings, scores and faults are in the API from now on);
- ``{"type": "submission", "id": N, "status": "active" | "rejected"}``: submission ``N``'s check
  is over (the author's corner shows it).

A page only learns *that* something changed and fetches what it shows again, so an event it
missed (a full queue, a reconnection) costs nothing but a late refresh. A comment line every
``HEARTBEAT`` seconds keeps idle connections open through proxies and notices a gone client.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from .webserver import connection_budget

HEARTBEAT = 15.0
QUEUE = 64  # events waiting for one slow stream; past it, that stream misses events


class _Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(QUEUE)

    def offer(self, event: dict[str, Any] | None) -> None:
        """On the subscriber's loop: a full queue drops the event (the page refreshes on the next)."""
        if self.queue.full() and event is not None:
            return
        if self.queue.full():
            self.queue.get_nowait()
        self.queue.put_nowait(event)


class EventHub:
    """Fans events out to the open streams; :meth:`publish` and :meth:`close` may be called from
    any thread, streams live on the web server's event loop. At most ``max_subscribers`` streams
    are open at once (one more is told to come back later): by default a quarter of the web
    server's connections, as a stream holds its connection for as long as the page is open and
    the server never sheds it (arbiter.arena.webserver)."""

    def __init__(self, max_subscribers: int | None = None) -> None:
        self.max_subscribers = max_subscribers if max_subscribers is not None else connection_budget() // 4
        self._lock = threading.Lock()
        self._subscribers: set[_Subscriber] = set()
        self._closed = False
        self._gate: Callable[[dict[str, Any] | None], None] = self.deliver

    def gate(self, through: Callable[[dict[str, Any] | None], None]) -> None:
        """Events go to ``through`` first, which :meth:`deliver` s them when it is ready (the
        rendered leaderboard, arbiter.arena.snapshots: a page fetching on an event sees it)."""
        self._gate = through

    def publish(self, event: dict[str, Any]) -> None:
        """Send ``event`` (a JSON object with a ``type``) to every open stream."""
        self._gate(dict(event))

    def close(self) -> None:
        """End every stream (the server is stopping); later subscribers end at once."""
        with self._lock:
            self._closed = True
        self._gate(None)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def deliver(self, event: dict[str, Any] | None) -> None:
        """Send ``event`` to the open streams now (None ends them)."""
        with self._lock:
            subscribers = list(self._subscribers)
        for s in subscribers:
            try:
                s.loop.call_soon_threadsafe(s.offer, event)
            except RuntimeError:  # its loop is closed: the stream is gone
                self._drop(s)

    def _drop(self, s: _Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(s)

    def subscribe(self) -> _Subscriber | None:
        """A new stream on the running loop; None when the hub is closed or full."""
        with self._lock:
            if self._closed or len(self._subscribers) >= self.max_subscribers:
                return None
            s = _Subscriber(asyncio.get_running_loop())
            self._subscribers.add(s)
            return s

    async def stream(self, s: _Subscriber, request: Request) -> AsyncIterator[str]:
        """The stream's text: a ``retry`` hint, then events and heartbeats until the client or the hub goes."""
        try:
            yield "retry: 3000\n\n"
            while not await request.is_disconnected():
                try:
                    event = await asyncio.wait_for(s.queue.get(), HEARTBEAT)
                except TimeoutError:
                    yield ": still here\n\n"
                    continue
                if event is None:
                    return
                yield f"data: {json.dumps(event, separators=(',', ':'))}\n\n"
        finally:
            self._drop(s)


def add_events(app: FastAPI, hub: EventHub) -> None:
    @app.get("/api/events", tags=["ladder"], response_class=StreamingResponse)
    async def events(request: Request) -> StreamingResponse:
        """Server-sent events (``text/event-stream``): one ``data:`` line of JSON per event, such as
        ``{"type": "match", "id": 12, "status": "complete"}`` when a match is recorded."""
        s = hub.subscribe()
        if s is None:
            return StreamingResponse(iter(["retry: 30000\n\n"]), status_code=503, media_type="text/event-stream")
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(hub.stream(s, request), media_type="text/event-stream", headers=headers)
