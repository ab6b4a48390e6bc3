"""The arena's web server: uvicorn in a thread, with bounds on what a client may hold.

uvicorn as it comes lets any client hold a connection for as long as it likes: nothing times out
a connection that never finishes its request head, or a body sent a byte at a time, and every
connection costs the process a file descriptor, so enough idle ones leave it none for the next
request (docs/security.md, "The arena over HTTP"). Here:

* **Slow clients**: a request head must be whole within ``HEAD_SECONDS`` of the connection (or
  of its first byte after a keep-alive pause), and a body must arrive within ``BODY_GRACE``
  seconds plus its declared length at ``MIN_BODY_RATE``; past either, the connection is closed.
* **Connections**: the server holds at most :func:`connection_budget` of them (half the
  process's open-file limit). Past it, the connection silent the longest among those with no
  request in progress (idle, or still sending its head) is closed for the new one; when every
  connection has a request in progress, the new one is closed.
* **Accepting**: asyncio accepts up to ``backlog`` connections in one turn of its loop, before
  any of them can be shed, and once the process is out of descriptors it logs "socket.accept()
  out of system resource" that many times a second. The backlog here is ``BACKLOG``, and that
  message is logged once a minute at most, with a count (:class:`AcceptErrors`).
* **No delayed ACK wait**: a socket made by :func:`socket.create_server` and handed to uvicorn
  never gets ``TCP_NODELAY`` from asyncio (it sets it only on sockets it creates), so uvicorn's
  head and body, written apart, would wait for the client's delayed ACK (~40 ms) on every
  kept-alive request. Each accepted connection gets it here.
* **Proxies**: ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are read only from the addresses
  in ``proxies`` (the arena file's key; none by default): anyone else's are ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from arbiter.addresses import host_port
from arbiter.errors import ConfigError

__all__ = ["AcceptErrors", "WebServer", "connection_budget"]

log = logging.getLogger(__name__)

HEAD_SECONDS = 10.0  # from a connection (or the first byte of its next request) to the end of the request head
BODY_GRACE = 10.0  # a body's time, beyond its length at MIN_BODY_RATE
MIN_BODY_RATE = 50_000  # bytes a second: a 10 MiB upload may take 10 + 210 s
BACKLOG = 128  # connections waiting to be accepted, and accepted in one turn of the loop
MIN_CONNECTIONS = 16
MAX_CONNECTIONS = 10_000
ACCEPT_REPORT_SECONDS = 60.0
OUT_OF_RESOURCE = "socket.accept() out of system resource"


def connection_budget() -> int:
    """How many connections the web server holds at once: half the process's open-file limit
    (the other half for its database, logs and matches), within bounds."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft // 2))


class BoundedH11(H11Protocol):
    """uvicorn's HTTP/1.1 connection with deadlines on the request head and body, and the
    server's connection budget (see the module's docstring). ``budget`` is set per server."""

    budget: ClassVar[int] = MIN_CONNECTIONS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        no_delay(transport)
        super().connection_made(transport)
        self.last_heard = self.loop.time()
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for = ""
        self._arm("head", HEAD_SECONDS)  # a silent connection is closed too
        self._shed()

    def data_received(self, data: bytes) -> None:
        self.last_heard = self.loop.time()
        if self._deadline is None and self.conn.their_state is h11.IDLE:  # the first byte of a request
            self._arm("head", HEAD_SECONDS)
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def idle(self) -> bool:
        """No request in progress: silent, between two requests, or still sending a head."""
        return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

    def _follow(self) -> None:
        """Arm the deadline for what the client is sending now."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._waiting_for != "body":
                self._arm("body", BODY_GRACE + self._declared_length() / MIN_BODY_RATE)
        elif state is not h11.IDLE or self._waiting_for == "body":
            self._disarm()  # the request is in: what follows is the server's to send

    def _declared_length(self) -> int:
        for name, value in self.headers or ():
            if name == b"content-length" and value.isdigit():
                return int(value)
        return 0  # chunked: the app refuses it at once (411)

    def _arm(self, what: str, seconds: float) -> None:
        self._disarm()
        self._waiting_for = what
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, ""

    def _too_slow(self) -> None:
        self._deadline = None
        log.debug("closed a connection from %s: its request %s came too slowly", _host(self.client), self._waiting_for)
        self.transport.close()

    def _shed(self) -> None:
        """Over the budget: close the connection silent the longest with no request in
        progress, else this new one."""
        open_ = [c for c in self.connections if isinstance(c, BoundedH11) and not c.transport.is_closing()]
        if len(open_) <= self.budget:
            return
        idle = [c for c in open_ if c is not self and c.idle()]
        victim = min(idle, key=lambda c: c.last_heard, default=self)
        victim.transport.close()


def no_delay(transport: asyncio.BaseTransport) -> None:
    """``TCP_NODELAY`` on a TCP connection (see the module's docstring); a Unix socket has none."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # a connection already reset: nothing to speed up
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _host(client: tuple[str, int] | None) -> str:
    return client[0] if client else "an unknown address"


class AcceptErrors:
    """The web server loop's exception handler: asyncio's "socket.accept() out of system
    resource" at most once every ``ACCEPT_REPORT_SECONDS``, with how many times it happened;
    anything else as asyncio reports it."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._last: float | None = None
        self.unreported = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != OUT_OF_RESOURCE:
            loop.default_exception_handler(context)
            return
        self.unreported += 1
        now = self._clock()
        if self._last is not None and now - self._last < ACCEPT_REPORT_SECONDS:
            return
        error = context.get("exception")
        reason = getattr(error, "strerror", None) or str(error)
        log.error(
            "the web server cannot accept connections: %s (%d times since the last report); it goes on with those "
            "it holds: raise the open-file limit (ulimit -n) if this lasts",
            reason,
            self.unreported,
        )
        self._last, self.unreported = now, 0


class WebServer:
    """An ASGI app served by uvicorn in a thread on a socket bound here (port 0: any free one),
    with the bounds of the module's docstring; ``proxies``: the addresses (or networks) whose
    ``X-Forwarded-For`` is believed."""

    def __init__(self, app: Any, listen: str, *, proxies: Sequence[str] = ()):
        found = host_port(listen)
        if found is None:
            raise ConfigError(f"web: {listen!r} is not HOST:PORT")
        host, port = found
        try:
            self.socket = socket.create_server((host, port), family=_family(host), reuse_port=False)
        except OSError as e:
            raise ConfigError(f"web: cannot listen on {listen}: {e.strerror or e}") from None
        bound = self.socket.getsockname()
        self.address = f"{host}:{bound[1]}" if ":" not in host else f"[{host}]:{bound[1]}"
        protocol = type("ArenaH11", (BoundedH11,), {"budget": connection_budget()})
        config = uvicorn.Config(
            app,
            http=protocol,
            ws="none",
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            backlog=BACKLOG,
            server_header=False,
            proxy_headers=bool(proxies),
            forwarded_allow_ips=list(proxies) or None,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="barbu-web", daemon=True)

    def _run(self) -> None:
        async def serve() -> None:
            asyncio.get_running_loop().set_exception_handler(AcceptErrors())
            await self.server.serve(sockets=[self.socket])

        asyncio.run(serve())

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(5)
        self.socket.close()


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
