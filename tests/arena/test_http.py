"""The arena's HTTP side against hostile clients: real uvicorn servers (test_api's arena, served as
`arbiter serve` serves it; one real `arbiter serve` process under a 1024 open-file limit) and
real slow or idle clients on raw sockets; what each may hold, and for how long, is in
docs/security.md ("The arena over HTTP")."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import socket
import subprocess
import threading
import time

import httpx
import pytest

from arbiter.arena.api import create_app
from arbiter.arena.config import parse_arena
from arbiter.arena.corner import session_secret
from arbiter.arena.guards import SECURITY_HEADERS
from arbiter.arena.service import ArenaService
from arbiter.arena.views import EntrantView
from arbiter.arena.webserver import BODY_GRACE, HEAD_SECONDS, WebServer
from arbiter.errors import ConfigError
from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.storage import row_id

from ..tournament.conftest import cli_command
from .test_api import ARENA, UPLOAD_LIMIT, Arena, arena, serving  # noqa: F401  (arena: the module's fixture)

DECLARED = UPLOAD_LIMIT  # within the upload limit: only the token can refuse it


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _answer(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends until it closes the connection, or ``seconds`` pass."""
    sock.settimeout(max(seconds, 0.01))
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except TimeoutError:
        pass
    return answer


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (anything it sends is read and dropped)."""
    deadline = time.monotonic() + max(seconds, 0.1)
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


@pytest.fixture(scope="module")
def guarded(arena):  # noqa: F811
    """test_api's service behind a second server with the corner, and a limiter of its own."""
    kept = arena.service.tokens.limiter
    arena.service.tokens.limiter = FailureLimiter(max_failures=3, window=60)
    try:
        with serving(create_app(arena.service, secret=session_secret(arena.folder / "store"))) as url:
            yield Arena(url, arena.folder, arena.engine, arena.service, arena.tokens, arena.queued)
    finally:
        arena.service.tokens.limiter = kept


def test_an_upload_without_an_authors_token_is_refused_on_its_head(guarded):
    """30 uploads declaring a body as large as the arena takes, without a token, with a wrong one, with one that is not a
    token: each is answered 401 (then 429) the moment its head is in, before a byte of its body
    is sent, and its connection closed; none is stored. The corner's upload without a session, too."""
    guarded.service.tokens.limiter = FailureLimiter(max_failures=1000)
    heads = []
    for i in range(30):
        auth = ("", "Authorization: Bearer ba1.0123456789abcdef." + "A" * 43 + "\r\n", "Authorization: Bearer x\r\n")
        heads.append(
            f"POST /api/submissions HTTP/1.1\r\nHost: x\r\n{auth[i % 3]}Content-Type: multipart/form-data; "
            f"boundary=b\r\nContent-Length: {DECLARED}\r\n\r\n".encode()
        )
    heads.append(
        f"POST /me/submit HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        f"Content-Length: {DECLARED}\r\n\r\n".encode()
    )
    queued = len(guarded.queued)
    socks = [socket.create_connection(_address(guarded.url), timeout=10) for _ in heads]
    try:
        started = time.monotonic()
        for sock, head in zip(socks, heads, strict=True):
            sock.sendall(head)
        answers = [_answer(sock, started + 10 - time.monotonic()) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    for answer in answers[:-1]:
        assert re.match(rb"HTTP/1.1 401 ", answer), answer[:200]
        assert b"connection: close" in answer.lower() and answer.endswith(b"}")  # answered, then closed
    assert answers[-1].startswith(b"HTTP/1.1 403 ") and b"own page" in answers[-1]
    assert len(guarded.queued) == queued
    guarded.service.tokens.limiter = FailureLimiter(max_failures=3, window=60)
    for _ in range(3):
        assert httpx.post(guarded.url + "/api/submissions", headers={"Authorization": "Bearer nope"}).status_code == 401
    with socket.create_connection(_address(guarded.url), timeout=10) as sock:
        sock.sendall(heads[2])
        assert _answer(sock, 10).startswith(b"HTTP/1.1 429 ")  # the limiter counts here too, before the body


def _client(address: str, url: str) -> httpx.Client:
    """A client whose connections come from ``address`` (any 127.x.y.z is this machine's)."""
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=address), timeout=30)


def test_a_guesser_slows_itself_down_and_not_the_author(guarded):
    """Failures count per (address, author the token's id names): wrong tokens of ids nobody has
    block the guesser's address for those, and the author's own token still opens from that very
    address; wrong secrets under alice's id block (that address, alice) only: alice from another
    address goes on, bob from the guesser's address too."""
    guarded.service.tokens.limiter = FailureLimiter(max_failures=3, window=60)
    alice, bob = guarded.tokens["alice"], guarded.tokens["bob"]
    alice_id = alice.split(".")[1]

    def status(client: httpx.Client, token: str) -> int:
        return client.get("/api/submissions/1", headers={"Authorization": f"Bearer {token}"}).status_code

    with _client("127.0.0.2", guarded.url) as guesser, _client("127.0.0.3", guarded.url) as elsewhere:
        for i in range(5):
            guess = f"ba1.{os.urandom(8).hex()}.{'A' * 43}"
            assert status(guesser, guess) == (401 if i < 3 else 429)
        assert status(guesser, "not a token") == 429  # the same (address, nobody)
        assert status(guesser, alice) == 200  # the guesser named nobody: alice, at its address, is not slowed
        for i in range(4):
            assert status(guesser, f"ba1.{alice_id}.{'B' * 43}") == (401 if i < 3 else 429)
        assert status(guesser, alice) == 429  # (this address, alice): whoever holds her id here waits
        assert status(elsewhere, alice) == 200 and status(guesser, bob) == 200


def test_forwarded_for_is_believed_only_from_the_arenas_proxies(guarded):
    """Without `proxies`, a client that names a fresh X-Forwarded-For at each guess is counted
    under its own address (and waits after 3); behind a proxy the arena file names, each client
    the proxy forwards is counted under its own address (and the cookie's Secure flag follows
    X-Forwarded-Proto)."""
    guarded.service.tokens.limiter = FailureLimiter(max_failures=3, window=60)
    with _client("127.0.0.1", guarded.url) as client:  # uvicorn believes loopback by default
        codes = [
            client.get(
                "/api/submissions/1", headers={"Authorization": "Bearer nope", "X-Forwarded-For": f"10.0.0.{i}"}
            ).status_code
            for i in range(10)
        ]
    assert codes == [401] * 3 + [429] * 7
    app = create_app(guarded.service, secret=session_secret(guarded.folder / "store"))
    with serving(app, proxies=["127.0.0.5"]) as url, _client("127.0.0.5", url) as proxy:
        forwarded = [
            proxy.get(
                "/api/submissions/1", headers={"Authorization": "Bearer nope", "X-Forwarded-For": f"10.1.0.{i}"}
            ).status_code
            for i in range(10)
        ]
        assert forwarded == [401] * 10  # ten clients, one guess each
        same = [
            proxy.get(
                "/api/submissions/1", headers={"Authorization": "Bearer nope", "X-Forwarded-For": "10.2.0.1"}
            ).status_code
            for _ in range(4)
        ]
        assert same == [401] * 3 + [429]
        me = proxy.get("/me", headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "10.3.0.1"})
        assert "secure" in me.headers["set-cookie"].lower()


def test_slow_heads_and_bodies_are_cut_while_the_api_answers(guarded):
    """Silent connections, heads sent a byte a second, and a body sent a byte a second after its
    head: each is closed by the server within its bound, and the API answers meanwhile."""
    host, port = _address(guarded.url)
    silent = [socket.create_connection((host, port), timeout=10) for _ in range(20)]
    dribbling = [socket.create_connection((host, port), timeout=10) for _ in range(20)]
    body = socket.create_connection((host, port), timeout=10)
    body.sendall(b"POST /me/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 1000\r\n\r\n")  # fmt: skip
    started = time.monotonic()
    stop = threading.Event()

    def dribble() -> None:
        head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 100
        for i in range(len(head)):
            if stop.is_set():
                return
            for sock in [*dribbling, body]:
                with contextlib.suppress(OSError):  # closed by the server: what the test waits for
                    sock.send(head[i : i + 1] if sock is not body else b"t")
            time.sleep(1)

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        for _ in range(3):
            assert httpx.get(guarded.url + "/api/state", timeout=5).status_code == 200
            time.sleep(1)
        bound = HEAD_SECONDS + 5
        assert all(_closed_within(sock, bound + 2 - (time.monotonic() - started)) for sock in silent)
        assert all(_closed_within(sock, bound + 2 - (time.monotonic() - started)) for sock in dribbling)
        assert _closed_within(body, BODY_GRACE + 8 - (time.monotonic() - started))
        assert time.monotonic() - started < max(HEAD_SECONDS, BODY_GRACE) + 10
        assert httpx.get(guarded.url + "/api/state", timeout=5).status_code == 200
    finally:
        stop.set()
        thread.join(5)
        for sock in [*silent, *dribbling, body]:
            sock.close()


def test_every_response_carries_the_security_headers(guarded):
    """Pages, JSON, 404s, a log, a bot's output, the pages' scripts, refusals: every answer says
    CSP (no inline script), X-Frame-Options and nosniff; no page the arena serves has an inline script."""
    match = row_id(guarded.matches()[0])
    paths = [
        "/", "/entrants/alice", f"/matches/{match}", "/entrants/nobody", "/matches/999999", "/no/such/route",
        "/api/leaderboard", "/api/entrants/nobody", f"/api/matches/{match}/log", f"/api/matches/{match}/stderr/0",
        "/static/arena.js", "/static/viewer.js", "/static/report.js", "/me", "/openapi.json",
    ]  # fmt: skip
    answers = [httpx.get(guarded.url + path, timeout=30) for path in paths]
    answers.append(httpx.post(guarded.url + "/api/entrants/alice/retire", content=b"x" * (100 << 10), timeout=30))
    answers.append(httpx.post(guarded.url + "/me/login", timeout=30))
    for path, response in zip([*paths, "413", "403"], answers, strict=True):
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get(name) == value, (path, name, dict(response.headers))
        if response.headers["content-type"].startswith("text/html"):
            scripts = re.findall(r"<script([^>]*)>", response.text)
            assert all("src=" in a or "application/json" in a for a in scripts), (path, scripts)
    assert "script-src 'self'" in SECURITY_HEADERS["Content-Security-Policy"]
    assert "unsafe-inline" not in SECURITY_HEADERS["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    assert answers[paths.index("/static/report.js")].status_code == 404  # only the pages' own scripts are served
    assert answers[-2].status_code == 413 and answers[-1].status_code == 403
    recorded = {f"/matches/{match}", f"/api/matches/{match}/log"}  # the log as recorded: its house commands
    said = [r.text for path, r in zip([*paths, "413", "403"], answers, strict=True) if path not in recorded]
    assert not any(str(guarded.folder) in text for text in said)  # no path of the server in what it says


class _Broken(ArenaService):
    """The arena with a bug in one route (the one thing here that cannot be made to fail for
    real): its exception names a file of the server."""

    def entrant(self, name: str) -> EntrantView:
        raise RuntimeError("cannot open /srv/arena/secret/state.db")


def test_a_failure_of_the_arenas_own_is_one_line_with_the_headers_and_no_path(guarded):
    service = _Broken(guarded.engine, ARENA, guarded.folder / "logs", uploads=guarded.service.uploads)
    with serving(create_app(service)) as url:
        response = httpx.get(url + "/api/entrants/alice", timeout=30)
        assert httpx.get(url + "/api/leaderboard", timeout=30).status_code == 200  # the rest goes on
    assert response.status_code == 500 and "/srv" not in response.text
    assert response.json()["detail"] == "the arena failed to answer this request; it is logged"
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value


def test_idle_connections_at_the_open_file_limit_do_not_shut_out_the_api(tmp_path):
    """`arbiter serve` under a 1024 open-file limit, 1100 connections opened to it that say
    nothing: the API keeps answering, and the server's log stays a few lines long."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard >= 1400, "this test holds 1100 sockets"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1400) if hard == resource.RLIM_INFINITY else hard, hard))
    (tmp_path / "arena.yaml").write_text(
        f"name: idle\nentrants: []\nweb: 127.0.0.1:0\ndatabase: {tmp_path}/arena.db\n"
        f"log_folder: {tmp_path}/matches\nstore: {tmp_path}/bundles\n"
    )
    proc = subprocess.Popen(
        ["prlimit", "--nofile=1024", *cli_command("serve", str(tmp_path / "arena.yaml"))], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    idle: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 120
        while not (found := next((m for line in list(lines) if (m := re.search(r"serving (http://\S+)", line))), None)):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.2)
        url = found.group(1)
        host, port = _address(url)
        for _ in range(1100):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex((host, port))
            idle.append(sock)
        answered = []
        for _ in range(15):
            started = time.monotonic()
            response = httpx.get(url + "/api/state", timeout=10)
            answered.append((response.status_code, round(time.monotonic() - started, 1)))
            time.sleep(0.5)
        assert all(code == 200 for code, _ in answered), answered
    finally:
        for sock in idle:
            sock.close()
        proc.terminate()
        proc.wait(60)
        reader.join(10)
    announced = ("serving http", "the site:", "your corner:", "the API docs:")  # the addresses serve prints
    log = [line for line in lines if not any(a in line for a in announced) and line.strip()]
    assert len(log) <= 3, "".join(log[:20]) + f"... {len(log)} lines"


def test_the_arena_files_proxies_are_addresses_or_networks(tmp_path):
    text = "name: a\nentrants: []\nproxies: [127.0.0.1, '10.0.0.0/8', '::1']\n"
    assert parse_arena(text, base_dir=tmp_path, check_commands=False).proxies == (
        "127.0.0.1/32",
        "10.0.0.0/8",
        "::1/128",
    )
    assert parse_arena("name: a\nentrants: []\n", base_dir=tmp_path, check_commands=False).proxies == ()
    for bad, words in (("['*']", "'*' is not an IP address"), ("127.0.0.1", "expected a list")):
        with pytest.raises(ConfigError, match=re.escape(words)) as e:
            parse_arena(f"name: a\nentrants: []\nproxies: {bad}\n", base_dir=tmp_path, check_commands=False)
        assert str(e.value).startswith("arena.yaml:3: proxies") and "\n" not in str(e.value)


def test_every_accepted_connection_has_tcp_nodelay():
    """asyncio sets TCP_NODELAY only on sockets it creates, not on those of the socket the arena
    hands uvicorn: without it a kept-alive request waits ~40 ms for the client's delayed ACK. The
    option is read from the server's side of each accepted connection."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    app = Starlette(routes=[Route("/hello", lambda request: JSONResponse({"hello": "world"}))])
    server = WebServer(app, "127.0.0.1:0")
    server.start()
    try:
        with httpx.Client(base_url=f"http://{server.address}") as client:
            for _ in range(3):  # one kept-alive connection
                assert client.get("/hello").json() == {"hello": "world"}
            with httpx.Client(base_url=f"http://{server.address}") as second:
                assert second.get("/hello").status_code == 200
                accepted = [c.transport.get_extra_info("socket") for c in server.server.server_state.connections]
                assert len(accepted) == 2
                assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted)
    finally:
        server.stop()
