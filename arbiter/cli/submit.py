"""``arbiter submit``: send a bot's folder to an arena, and follow its check (docs/arena.md).

The folder is packed as the arena stores it (:func:`arbiter.arena.archive.pack_folder`) and
posted to ``URL/api/submissions`` as the multipart field ``bundle``, with the author's token as a
bearer token; the arena answers with the submission (its ``id`` and ``status``), which
``GET URL/api/submissions/{id}`` follows until it is decided. Only the standard library speaks
HTTP here. Redirects are not followed: the token goes to the address given and nowhere else.
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.parse
from pathlib import Path
from typing import Annotated, Any

import typer

from arbiter.cli.common import fail, print_json, user_errors
from arbiter.errors import FAILED, USAGE, ConfigError
from arbiter.files import read_text
from arbiter.text import printable

MAX_RESPONSE = 4 << 20  # bytes of one answer of the arena (a submission with its check report)
TIMEOUT = 60.0  # seconds for one request
POLL_SECONDS = (1.0, 2.0, 3.0, 5.0)  # the waits between polls, the last one repeated


def submit_command(
    folder: Annotated[str, typer.Argument(metavar="DIR", help="The bot's folder, with its entrant.yaml.")],
    arena: Annotated[
        str, typer.Option("--arena", metavar="URL", help="The arena's address, e.g. http://arena.example:8080.")
    ],
    token_file: Annotated[
        str,
        typer.Option("--token-file", metavar="FILE", help="A file holding your author token (and nothing else)."),
    ],
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the bot is checked and print the report.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the arena's answer (the submission) as JSON.")] = False,
) -> None:
    """Submit a bot to an arena: pack DIR, upload it, print the submission's id and status.

    With --wait, follow its check and print the report; exit 1 if the bot was rejected."""
    from arbiter.arena.archive import LARGEST_UPLOAD, pack_folder

    base = _arena_url(arena)
    with user_errors():
        token = _read_token(token_file)
        # As large as any arena may take: the arena itself refuses what is over its own caps, and
        # its answer (413) says them; no cap assumed here.
        archive = pack_folder(Path(folder), LARGEST_UPLOAD)
    client = _Client(base, token)
    body, content_type = _multipart("bundle", f"{Path(folder).resolve().name or 'bot'}.tar.gz", archive)
    submission = client.call("POST", "/api/submissions", body, content_type)
    ident = submission.get("id")
    if ident is None:
        fail(f"the arena at {base} answered without a submission id: {printable(json.dumps(submission)[:200])}", 1)
    status_url = f"{base}/api/submissions/{urllib.parse.quote(str(ident), safe='')}"
    if not as_json:
        typer.echo(_summary(submission))
        typer.echo(f"follow its check in your corner: {printable(base)}/me  (JSON: {printable(status_url)})")
    if wait:
        submission = _wait(client, status_url[len(base) :], submission)
        if not as_json:
            typer.echo(_summary(submission))
            typer.echo(_report_text(submission.get("report")))
            if submission.get("status") == "active" and isinstance(name := _name(submission), str):
                typer.echo(f"its page: {printable(base)}/entrants/{urllib.parse.quote(name, safe='')}")
    if as_json:
        print_json(submission)
    if wait and submission.get("status") == "rejected":
        raise typer.Exit(FAILED)


def _arena_url(text: str) -> str:
    url = text.strip().rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        fail(f"--arena {printable(text)}: expected the arena's address, http://HOST:PORT or https://HOST")
    return url


def _read_token(path: str) -> str:
    """The author token in ``path``; a ConfigError that never shows it."""
    token = read_text(path, 64 << 10, "token file").strip()
    if not token:
        raise ConfigError(f"--token-file {printable(path)} is empty: put the token `arbiter author add` printed in it")
    if any(c.isspace() for c in token) or not token.isascii():
        raise ConfigError(f"--token-file {printable(path)} holds more than the token: put only the token in it")
    return token


def _multipart(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body holding one file, and its Content-Type."""
    boundary = secrets.token_hex(16)
    while boundary.encode() in data:  # pragma: no cover - 128 random bits
        boundary = secrets.token_hex(16)
    quoted = filename.replace("\\", "_").replace('"', "_")
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{quoted}"\r\n'
        "Content-Type: application/gzip\r\n\r\n"
    )
    body = head.encode("utf-8", "replace") + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


class _Client:
    """Requests to one arena with the author's token; every failure is one ``error:`` line."""

    def __init__(self, base: str, token: str):
        import urllib.request  # here: the other commands start without it

        class NoRedirects(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # a 3xx becomes an HTTPError
                return None

        self.base, self.token = base, token
        self.opener = urllib.request.build_opener(NoRedirects())

    def call(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> Any:
        import urllib.error
        import urllib.request

        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=TIMEOUT) as response:
                payload = response.read(MAX_RESPONSE + 1)
        except urllib.error.HTTPError as e:
            with e:
                detail = _detail(e.read(MAX_RESPONSE)) or e.reason or "no reason given"
            fail(f"the arena refused it (HTTP {e.code}): {self._hidden(detail)}", USAGE if e.code < 500 else FAILED)
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", None) or e
            fail(f"cannot reach the arena at {printable(self.base)}: {printable(str(reason))}", FAILED)
        try:
            if len(payload) > MAX_RESPONSE:
                raise ValueError("too long")
            answer = json.loads(payload)
            if not isinstance(answer, dict):
                raise ValueError("not an object")
        except ValueError:
            fail(f"the arena at {printable(self.base)} answered {method} {path} with something other than JSON", FAILED)
        return answer

    def _hidden(self, text: str) -> str:
        """``text`` (from the server) without the token, should it repeat it."""
        return text.replace(self.token, "<token>")


def _detail(payload: bytes) -> str:
    """The server's message in an error's body: FastAPI's ``{"detail": ...}``, else its text."""
    try:
        detail = json.loads(payload)["detail"]
    except (ValueError, KeyError, TypeError):
        return payload.decode("utf-8", "replace").strip()[:500]
    if isinstance(detail, list):  # a request the API could not validate: where, and why
        detail = "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail)
    return str(detail)


def _wait(client: _Client, path: str, submission: dict[str, Any]) -> dict[str, Any]:
    """The submission once it is no longer being checked (polled; Ctrl-C stops waiting)."""
    polls = 0
    while submission.get("status") == "checking":
        time.sleep(POLL_SECONDS[min(polls, len(POLL_SECONDS) - 1)])
        polls += 1
        submission = client.call("GET", path)
    return submission


def _name(submission: dict[str, Any]) -> Any:
    """The submitted entrant's name, as the arena's API says it (SubmissionView's ``name``)."""
    return submission.get("name")


def _summary(submission: dict[str, Any]) -> str:
    entrant = _name(submission)
    version = submission.get("version")
    who = f" {entrant}@{version}" if entrant is not None and version is not None else ""
    return printable(f"submission {submission.get('id')}{who}: {submission.get('status')}")


def _report_text(report: Any) -> str:
    """The check report as check-bot prints it (the arena keeps it as JSON text with ``text``)."""
    if isinstance(report, str):
        try:
            report = json.loads(report)
        except ValueError:
            return printable(report, newlines=True)
    if isinstance(report, dict) and isinstance(report.get("text"), str):
        return printable(report["text"], newlines=True)
    return "no check report" if report is None else printable(json.dumps(report), newlines=True)
