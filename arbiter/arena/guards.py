"""What every request to the arena goes through before its route: the response headers that
keep its pages from being framed, sniffed or made to run scripts from elsewhere, and the bounds
on its body, with uploads admitted before their bodies are read.

**Headers** (:class:`SecurityHeaders`), on every response of the app (pages, JSON, 404s, logs,
scripts, errors): a Content-Security-Policy that runs only the arena's own scripts (no inline
script, nothing from elsewhere) and lets them fetch from the arena alone, ``X-Frame-Options:
DENY``, ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``.

**Bodies** (:class:`BodyGuard`): a body must declare its length (``Transfer-Encoding`` is
refused, 411), at most ``FORM_LIMIT`` bytes on every route but the uploads, at most the upload
limit on those (413 otherwise, before a byte of it is read). An upload route's ``admit`` runs on
the request's head alone, before its body is read: a missing or wrong token (or session) is
refused there, counted as any failed token is, and the body is never read. Every refusal here
closes the connection (``Connection: close``), so a body that keeps coming is not read either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "FORM_LIMIT", "SECURITY_HEADERS", "BodyGuard", "SecurityHeaders", "Upload", "error"]

FORM_LIMIT = 64 << 10  # a request body on any route but an upload: a form, a multipart's headers
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
CLOSE = {"Connection": "close"}


def error(status: int, detail: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The arena's error answer: ``{"detail": "one line"}``."""
    return JSONResponse({"detail": " ".join(detail.split())}, status_code=status, headers=headers)


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response that does not set them itself."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)


@dataclass(frozen=True)
class Upload:
    """A route that takes an upload: its body's limit, and ``admit(request)``, which looks at the
    head alone (it may read the database: it runs in a thread) and returns the refusal to send,
    or None to let the body be read."""

    limit: int  # the archive's bytes; its body may hold FORM_LIMIT more (the multipart's headers)
    admit: Callable[[Request], Response | None]


class BodyGuard:
    """Bounds every request's body before it is read (see the module's docstring); ``uploads``
    maps a POST route's path to its :class:`Upload`."""

    def __init__(self, app: ASGIApp, uploads: Mapping[str, Upload]):
        self.app = app
        self.uploads = uploads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = await self._refusal(scope)
        if refusal is not None:
            refusal.headers.update(CLOSE)
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        upload = self.uploads.get(scope["path"]) if scope["method"] == "POST" else None
        if "transfer-encoding" in headers:
            return error(411, "send the request body with a Content-Length (this server takes no chunked body)")
        length = headers.get("content-length", "0")
        limit = upload.limit + FORM_LIMIT if upload is not None else FORM_LIMIT
        if not length.isdigit() or int(length) > limit:
            if upload is not None:
                return error(413, f"the upload is larger than the arena's limit of {upload.limit} bytes")
            return error(413, f"the request body is larger than {FORM_LIMIT} bytes")
        if upload is None:
            return None
        return await run_in_threadpool(upload.admit, Request(scope))
