"""`arbiter submit`: the real command against a small real HTTP server on loopback that stands in
for the arena's API (built elsewhere): it checks the request's shape, stores the upload with the
arena's own open_archive and checks the bot with its own check_submission."""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import os
import subprocess
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.arena.archive import UploadLimits, open_archive
from arbiter.arena.checking import check_submission
from arbiter.cli import app
from arbiter.errors import SubmissionRefused
from arbiter.process.limits import Limits
from arbiter.process.sandbox import strongest_isolation

from .test_archive import ENTRANT, RANDOM_BOT
from .test_checking import ILLEGAL_BOT

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ba1_test-author-token-0123456789"


class FakeArena:
    """What the arena's API would do with a submission, by the request shapes docs/arena.md gives."""

    def __init__(self, store: Path):
        self.store = store
        self.requests: list[dict] = []
        self.submissions: dict[int, dict] = {}
        self.polls = 0
        self.redirect: str | None = None  # answer every request with a redirection there
        arena = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                arena.handle(self, "POST")

            def do_GET(self):
                arena.handle(self, "GET")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, handler, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def handle(self, handler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length)
        self.requests.append(
            {"method": method, "path": handler.path, "headers": dict(handler.headers.items()), "body": body}
        )
        if self.redirect is not None:
            handler.send_response(307)
            handler.send_header("Location", self.redirect + handler.path)
            handler.send_header("Content-Length", "0")
            return handler.end_headers()
        if handler.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(handler, 401, {"detail": "unknown author token"})
        if method == "POST" and handler.path == "/api/submissions":
            return self.submit(handler, body)
        if method == "GET" and handler.path.startswith("/api/submissions/"):
            submission = self.submissions.get(int(handler.path.rsplit("/", 1)[1]))
            if submission is None:
                return self.answer(handler, 404, {"detail": "no such submission"})
            self.polls += 1
            return self.answer(handler, 200, submission if self.polls > 1 else {**submission, "status": "checking"})
        self.answer(handler, 404, {"detail": "Not Found"})

    def submit(self, handler, body: bytes) -> None:
        content_type = handler.headers["Content-Type"]
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        assert content_type.startswith("multipart/form-data; boundary=") and message.is_multipart()
        (part,) = message.iter_parts()
        assert part.get_param("name", header="content-disposition") == "bundle"
        assert part.get_filename().endswith(".tar.gz")
        archive = part.get_payload(decode=True)
        try:
            bot = open_archive(archive, self.store, UploadLimits())
        except SubmissionRefused as e:
            return self.answer(handler, 422, {"detail": str(e)})
        passed, report = check_submission(
            bot.folder, bot.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
        )
        ident = len(self.submissions) + 7
        self.submissions[ident] = {
            "id": ident, "name": bot.name, "version": 1, "status": "active" if passed else "rejected",
            "report": report, "bundle": bot.digest,
        }  # fmt: skip
        self.answer(handler, 201, {**self.submissions[ident], "status": "checking", "report": None})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def arena(tmp_path):
    server = FakeArena(tmp_path / "store")
    yield server
    server.close()


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


def bot_folder(root: Path, entrant: bytes = ENTRANT, files=(("random_bot.py", RANDOM_BOT),)) -> Path:
    folder = root / "bot"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__" / "random_bot.cpython-311.pyc").write_bytes(b"\0")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: main")
    (folder / "entrant.yaml").write_bytes(entrant)
    for name, data in files:
        (folder / name).write_bytes(data)
    return folder


def submit(*args: str):
    return CliRunner().invoke(app, ["submit", *args])


def test_a_folder_is_packed_posted_and_its_id_status_and_address_printed(tmp_path, arena, token_file):
    result = submit(str(bot_folder(tmp_path)), "--arena", arena.url + "/", "--token-file", str(token_file))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "submission 7 alice@1: checking",
        f"follow its check in your corner: {arena.url}/me  (JSON: {arena.url}/api/submissions/7)",
    ]
    (request,) = arena.requests
    assert request["method"] == "POST" and request["path"] == "/api/submissions"
    assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert int(request["headers"]["Content-Length"]) == len(request["body"])
    payload = request["body"].split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0]
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as tar:
        assert tar.getnames() == ["entrant.yaml", "random_bot.py"]  # no .git, no byte code
    assert TOKEN not in result.output


def test_wait_follows_the_check_and_prints_the_report(tmp_path, arena, token_file):
    result = submit(str(bot_folder(tmp_path)), "--arena", arena.url, "--token-file", str(token_file), "--wait")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == ["submission 7 alice@1: checking",
                         f"follow its check in your corner: {arena.url}/me  (JSON: {arena.url}/api/submissions/7)",
                         "submission 7 alice@1: active"]  # fmt: skip
    assert lines[3] == "check-bot: python random_bot.py" and lines[-2].startswith("ok: all 22 steps passed")
    assert lines[-1] == f"its page: {arena.url}/entrants/alice"
    assert [r["method"] for r in arena.requests] == ["POST", "GET", "GET"]
    assert all(r["headers"]["Authorization"] == f"Bearer {TOKEN}" for r in arena.requests)


def test_a_rejected_bot_shows_its_report_and_exits_1(tmp_path, arena, token_file):
    folder = bot_folder(tmp_path, b"name: bad\ncommand: python illegal_bot.py\n", [("illegal_bot.py", ILLEGAL_BOT)])
    result = submit(str(folder), "--arena", arena.url, "--token-file", str(token_file), "--wait", "--json")
    assert result.exit_code == 1, result.output
    (line,) = result.stdout.splitlines()
    answer = json.loads(line)
    assert answer["status"] == "rejected" and answer["name"] == "bad"
    assert "FAIL  legal-actions" in json.loads(answer["report"])["text"]


def test_a_wrong_token_is_one_error_line_with_the_servers_message(tmp_path, arena):
    wrong = tmp_path / "wrong"
    wrong.write_text("ba1_not-the-token\n")
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "arbiter"), "submit", str(bot_folder(tmp_path)), "--arena", arena.url,
         "--token-file", str(wrong)],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.splitlines() == ["error: the arena refused it (HTTP 401): unknown author token"]
    assert "ba1_not-the-token" not in out.stderr


def test_the_servers_refusal_of_an_archive_reaches_the_author(tmp_path, arena, token_file):
    folder = bot_folder(tmp_path, b"name: alice\ncommand: python missing.py\n")
    result = submit(str(folder), "--arena", arena.url, "--token-file", str(token_file))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: the arena refused it (HTTP 422): entrant.yaml: command: no such file: missing.py in the bot's folder"
    ]


def test_what_any_arena_would_refuse_is_refused_before_uploading_and_an_arena_s_cap_is_its_own_to_say(
    tmp_path, arena, token_file
):
    folder = tmp_path / "empty"
    folder.mkdir()
    result = submit(str(folder), "--arena", arena.url, "--token-file", str(token_file))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no entrant.yaml at the top of the bot's folder")
    big = bot_folder(tmp_path)
    (big / "weights.bin").write_bytes(os.urandom(11 << 20))  # does not compress: over 10 MiB packed
    assert arena.requests == []
    # Over this arena's 10 MiB but within what an arena may take: the arena's own answer says its cap.
    result = submit(str(big), "--arena", arena.url, "--token-file", str(token_file))
    assert result.exit_code == 2  # the arena refused it: the author's to change
    assert result.stderr.startswith("error: ") and "larger than 10 MiB" in result.stderr, result.stderr
    assert len(arena.requests) == 1


def test_an_arena_that_cannot_be_reached_or_used_is_one_error_line(tmp_path, token_file):
    folder = bot_folder(tmp_path)
    result = submit(str(folder), "--arena", "ftp://example.org", "--token-file", str(token_file))
    assert result.exit_code == 2 and "expected the arena's address, http://HOST:PORT" in result.stderr
    closed = FakeArena(tmp_path / "store")
    closed.close()  # nobody listens there now
    result = submit(str(folder), "--arena", closed.url, "--token-file", str(token_file))
    assert result.exit_code == 1 and result.stderr.startswith(f"error: cannot reach the arena at {closed.url}: ")
    empty = tmp_path / "empty-token"
    empty.write_text("\n")
    result = submit(str(folder), "--arena", closed.url, "--token-file", str(empty))
    assert result.exit_code == 2 and "is empty" in result.stderr


def test_a_redirection_is_not_followed_with_the_token(tmp_path, arena, token_file):
    elsewhere = FakeArena(tmp_path / "elsewhere")
    try:
        arena.redirect = elsewhere.url
        result = submit(str(bot_folder(tmp_path)), "--arena", arena.url, "--token-file", str(token_file))
        assert result.exit_code == 2 and "(HTTP 307)" in result.stderr
        assert len(arena.requests) == 1 and elsewhere.requests == []
    finally:
        elsewhere.close()
