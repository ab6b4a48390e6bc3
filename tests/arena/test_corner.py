"""The author's corner (``/me``) in a real headless Chromium against a real uvicorn serving
create_app over an SQLite database that a real tournament of the sample bots filled (alice's and
bob's versions played; bob's bot writes to stderr), with real authors and tokens. Uploads go
through the arena's real archive step (open_archive into a store folder); the check is decided
at once by the test's queue, with a report in check-bot's shape. Screenshots of the corner at
1280×800 and 390×844 go to test-artifacts/.
"""

from __future__ import annotations

import base64
import dataclasses
import http.server
import io
import json
import re
import stat
import subprocess
import tarfile
import threading
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, select

from arbiter.arena.api import create_app
from arbiter.arena.checking import check_submission
from arbiter.arena.corner import COOKIE, session_secret
from arbiter.arena.events import EventHub
from arbiter.arena.quotas import Uploads
from arbiter.arena.service import ArenaService
from arbiter.arena.views import public_id
from arbiter.execution.bundle import cached
from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.process.limits import Limits
from arbiter.process.sandbox import strongest_isolation
from arbiter.storage import open_database
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens
from arbiter.storage.models import Match
from arbiter.tournament.config import override, parse_config
from arbiter.tournament.loop import run_tournament

from .test_api import ARENA, ROOT, _tournament_file, serving

ARTIFACTS = ROOT / "test-artifacts"
HOSTILE = "<img src=x onerror=alert(1)>"  # in a check report: must show as text
FAILED_STEP = "answers within its time"


@dataclasses.dataclass
class Corner:
    url: str
    folder: Path
    engine: object
    service: ArenaService
    tokens: dict[str, str]

    def seats(self) -> tuple[int, int, int, str]:
        """A match with alice@1 and bob@1 at the table: its id, alice's seat, bob's, its log."""
        with Session(self.engine) as s:  # type: ignore[arg-type]
            for m in s.exec(select(Match).order_by(Match.id)):
                seats = m.seats
                if "alice@1" in seats and "bob@1" in seats:
                    return public_id(m.number), seats.index("alice@1"), seats.index("bob@1"), m.log_path
        raise AssertionError("no match of alice and bob")


@pytest.fixture(scope="module")
def corner(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arena")
    config = parse_config(_tournament_file(folder), display="arena.yaml", base_dir=folder)
    versioned = [dataclasses.replace(e, name=f"{e.name}@1") for e in config.entrants]
    db = f"sqlite:///{folder / 'arena.db'}"
    run_tournament(override(config, entrants=versioned), database=db, jobs=2)
    engine = open_database(db)
    store = ArenaStore(engine)
    tokens = {name: AuthorTokens(store.engine).issue(name) for name in ("alice", "bob")}
    report = {"ok": True, "steps": [{"name": "plays a match", "ok": True, "detail": HOSTILE}], "text": "all good"}
    for author in ("alice", "bob"):
        row = store.open_submission(ARENA, author, author, "0" * 64, "python bot.py", house=["heuristic"])
        store.decide(row.id, True, json.dumps(report))
    failed = {"ok": False, "steps": [{"name": "starts", "ok": True}, {"name": FAILED_STEP, "ok": False}]}
    row = store.open_submission(ARENA, "alice", "alice", "0" * 64, "python bot.py", house=["heuristic"])
    store.decide(row.id, False, json.dumps(failed))  # alice@2: rejected, alice@1 plays on
    hub = EventHub()

    def check(submission_id: int) -> None:
        """The real check-bot on the upload, in the sandbox, as the arena's checker runs it."""
        row = store.submission(submission_id)
        assert row is not None
        files = cached(row.bundle, folder / "store")
        assert files is not None
        passed, text = check_submission(
            files, row.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
        )
        decided = store.decide(submission_id, passed, text)
        hub.publish({"type": "submission", "id": submission_id, "status": decided.status})  # as ArenaHost does

    def enqueue(submission_id: int) -> None:
        threading.Thread(target=check, args=(submission_id,), daemon=True).start()

    uploads = Uploads(ARENA, store, folder / "store", enqueue=enqueue, house=["heuristic"])
    service = ArenaService(
        engine, ARENA, folder / "logs", uploads=uploads, house=["heuristic"], limiter=FailureLimiter(max_failures=1000)
    )
    with serving(create_app(service, hub=hub, secret=session_secret(folder / "store"))) as url:
        yield Corner(url, folder, engine, service, tokens)
        hub.close()


def _bot_archive(folder: Path, name: str) -> Path:
    """A real bot folder (the sample random bot) packed as a .tar.gz, as a browser would upload it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        tar.add(ROOT / "sample_bots" / "random_bot.py", arcname="random_bot.py")
        text = f"name: {name}\ncommand: python random_bot.py\n".encode()
        info = tarfile.TarInfo("entrant.yaml")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    path = folder / f"{name}.tar.gz"
    path.write_bytes(out.getvalue())
    return path


def _folder_archive(folder: Path, name: str) -> Path:
    """A real bot folder archived by tar(1) with the folder itself at the top, as people make it."""
    bot = folder / name
    bot.mkdir()
    (bot / "random_bot.py").write_bytes((ROOT / "sample_bots" / "random_bot.py").read_bytes())
    (bot / "entrant.yaml").write_text(f"name: {name}\ncommand: python random_bot.py\n")
    path = folder / f"{name}.tar.gz"
    subprocess.run(["tar", "czf", str(path), "-C", str(folder), name], check=True)
    return path


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def _logged_in(corner: Corner, author: str) -> tuple[httpx.Client, str]:
    """An HTTP client logged in as ``author`` through the form, and its session's CSRF token."""
    client = httpx.Client(base_url=corner.url, timeout=30)
    csrf = _csrf(client.get("/me").text)
    response = client.post("/me/login", data={"token": corner.tokens[author], "csrf": csrf})
    assert response.status_code == 303, response.text
    page = client.get("/me")
    assert f'<b id="meta">{author}</b>' in page.text
    return client, _csrf(page.text)


def test_an_author_logs_in_uploads_a_bot_and_reads_only_its_own_bots_output(corner, browser):
    requests: list[str] = []
    errors: list[str] = []

    def record(request) -> None:
        requests.append(request.url)

    browser.on("request", record)
    page = browser.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(corner.url + "/me")
        assert page.locator("#login").is_visible()
        shape = page.get_attribute("input[name=token]", "placeholder")
        assert "ba1.<16 hex digits>.<43 characters>" in shape and "ba1_" not in page.content()
        page.fill("input[name=token]", corner.tokens["alice"])
        page.click("#login button[type=submit]")
        page.wait_for_selector("#upload")
        assert page.inner_text("#meta") == "alice"

        # the session cookie: signed, HttpOnly, SameSite=Strict, not Secure over http, no token in it
        (cookie,) = [c for c in browser.cookies(corner.url) if c["name"] == COOKIE]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"] and cookie["path"] == "/"
        assert corner.tokens["alice"] not in cookie["value"]
        payload = cookie["value"].split(".")[0]
        assert json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))[0] == "alice"
        assert page.evaluate("document.cookie") == ""  # scripts cannot read it

        # the check report shows as text, never as markup; passing checks folded, failures open
        first = page.locator(".submission[data-status=active]").first
        assert HOSTILE in first.text_content() and page.locator(".submission img").count() == 0
        assert first.locator("details.passed").get_attribute("open") is None
        rejected = page.locator(".submission[data-status=rejected]")
        assert rejected.locator(".steps.failed li.bad").is_visible() and FAILED_STEP in rejected.inner_text()
        assert "starts" not in rejected.inner_text()  # its passing step is folded away
        assert "arbiter submit mybot --arena " + corner.url in page.inner_text("#submit-command")
        assert "MiB" in page.inner_text("#upload") and "bytes" not in page.inner_text("#upload")

        # upload a real bot folder from the browser, archived as people do (`tar czf alicebot.tar.gz
        # alicebot`: one top folder): confirmed, checked by check-bot, then an active entrant, the
        # page following the check on the arena's events, without a reload
        page.set_input_files("input[name=bundle]", str(_folder_archive(corner.folder, "alicebot")))
        page.click("#upload button[type=submit]")
        page.wait_for_selector(".submission:has-text('alicebot@1')")
        assert "Received alicebot@1" in page.inner_text("#message")
        page.wait_for_function("() => document.body.dataset.live === '1'")
        page.evaluate("window.sameDocument = true")
        uploaded = page.locator(".submission:has-text('alicebot@1')")
        page.wait_for_selector(".submission[data-status=active]:has-text('alicebot@1')", timeout=120_000)
        assert page.evaluate("window.sameDocument") is True  # updated in place
        assert uploaded.locator(".steps li.good").count() >= 3 and uploaded.locator(".steps li.bad").count() == 0
        board = {row.name: row for row in corner.service.leaderboard().entrants}
        assert board["alicebot"].author == "alice" and board["alicebot"].version == 1

        # screenshots, laptop and phone
        ARTIFACTS.mkdir(exist_ok=True)
        for width, height in ((1280, 800), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            shot = ARTIFACTS / f"arena-corner-{width}x{height}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
        page.set_viewport_size({"width": 1400, "height": 900})

        assert errors == []
        # alice's own output is one click away; bob's, guessed by URL, is not there
        match_id, alice_seat, bob_seat, log = corner.seats()
        assert page.locator(f"#outputs a.replay[href='/matches/{match_id}']").count() >= 1  # each match to its replay
        link = page.locator(f"a.stderr[href='/me/matches/{match_id}/stderr/{alice_seat}']")
        assert (
            link.count() == 1
            and page.locator(f"a.stderr[href='/me/matches/{match_id}/stderr/{bob_seat}']").count() == 0
        )
        response = page.goto(corner.url + link.get_attribute("href"))
        assert response.status == 200 and response.headers["content-type"].startswith("text/plain")
        assert response.body() == Path(log.removesuffix(".jsonl") + f".seat{alice_seat}.stderr").read_bytes()
        for seat, status in ((bob_seat, 404), (4, 400)):
            response = page.goto(f"{corner.url}/me/matches/{match_id}/stderr/{seat}")
            assert response.status == status and "bob was here" not in page.content()
        response = page.goto(f"{corner.url}/me/matches/999999/stderr/0")
        assert response.status == 404

        # retire a version from the corner
        page.goto(corner.url + "/me")
        page.locator(".submission:has-text('alicebot@1') form.retire button").click()
        page.wait_for_selector(".submission[data-status=retired]:has-text('alicebot@1')")
        assert "alicebot" not in {row.name for row in corner.service.leaderboard().entrants}

        # log out: the session is gone
        page.click("#logout button")
        page.wait_for_selector("#login")
        assert page.goto(f"{corner.url}/me/matches/{match_id}/stderr/{alice_seat}").status == 404

        assert all(url.startswith(corner.url + "/") for url in requests), "the corner made outside requests"
        assert all(e.startswith("Failed to load resource: the server responded with a status of 4") for e in errors)
    finally:
        page.close()
        browser.remove_listener("request", record)


def test_a_cross_site_form_post_is_refused(corner, browser):
    client, csrf = _logged_in(corner, "bob")
    try:
        # a form served by another origin (another port: the same site, so SameSite alone would let it in)
        form = (
            f'<!doctype html><form id="f" method="post" action="{corner.url}/me/retire">'
            f'<input name="name" value="bob"><input name="csrf" value="{csrf}"></form>'
            "<script>document.getElementById('f').submit()</script>"
        ).encode()

        class Hostile(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(form)

            def log_message(self, *args: object) -> None:
                pass

        hostile = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
        threading.Thread(target=hostile.serve_forever, daemon=True).start()
        page = browser.new_page()
        try:
            for name, value in client.cookies.items():
                browser.add_cookies([{"name": name, "value": value, "url": corner.url}])
            with page.expect_response(f"{corner.url}/me/retire") as posted:
                page.goto(f"http://127.0.0.1:{hostile.server_address[1]}/")
            response = posted.value
            assert response.status == 403
            assert response.text().count("\n") <= 1 and response.text().startswith("refused")
        finally:
            page.close()
            browser.clear_cookies()
            hostile.shutdown()
        assert "bob" in {row.name for row in corner.service.leaderboard().entrants}  # still playing

        # the same with a foreign Origin or Referer, or without the session's CSRF token: refused
        foreign = [{"Origin": "http://evil.example"}, {"Origin": "null"}, {"Referer": "http://evil.example/page"}]
        for headers in foreign:
            refused = client.post("/me/retire", data={"name": "bob", "csrf": csrf}, headers=headers)
            assert refused.status_code == 403 and refused.text.startswith("refused")
        for data in ({"name": "bob"}, {"name": "bob", "csrf": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")}):
            assert client.post("/me/retire", data=data).status_code == 403
        _, alice_csrf = _logged_in(corner, "alice")  # another session's token
        assert client.post("/me/retire", data={"name": "bob", "csrf": alice_csrf}).status_code == 403
        assert "bob" in {row.name for row in corner.service.leaderboard().entrants}
        # a login form posted from elsewhere is refused as well
        anonymous = httpx.Client(base_url=corner.url, timeout=30)
        with anonymous:
            token_csrf = _csrf(anonymous.get("/me").text)
            login = {"token": corner.tokens["bob"], "csrf": token_csrf}
            assert anonymous.post("/me/login", data=login, headers=foreign[0]).status_code == 403
        # from the corner's own page it goes through
        same = client.post("/me/retire", data={"name": "bob", "csrf": csrf}, headers={"Origin": corner.url})
        assert same.status_code == 303
        assert "bob" not in {row.name for row in corner.service.leaderboard().entrants}
    finally:
        client.close()


def test_a_tampered_cookie_is_refused_and_another_authors_output_is_404(corner):
    match_id, alice_seat, bob_seat, _ = corner.seats()
    client, _ = _logged_in(corner, "alice")
    try:
        assert client.get(f"/me/matches/{match_id}/stderr/{alice_seat}").status_code == 200
        assert client.get(f"/me/matches/{match_id}/stderr/{bob_seat}").status_code == 404
        value = client.cookies[COOKIE]
        payload, mac = value.split(".")
        session = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        forged = base64.urlsafe_b64encode(json.dumps(["bob", *session[1:]]).encode()).decode().rstrip("=")
        for tampered in (f"{forged}.{mac}", f"{payload}.{mac[:-2]}xx", payload, "x" * 5000):
            client.cookies.set(COOKIE, tampered, domain="127.0.0.1")
            page = client.get("/me")
            assert page.status_code == 200 and 'id="login"' in page.text and "bob" not in page.text
            response = client.get(f"/me/matches/{match_id}/stderr/{bob_seat}")
            assert response.status_code == 404 and "bob was here" not in response.text
    finally:
        client.close()
    # with no session at all, nothing
    assert httpx.get(f"{corner.url}/me/matches/{match_id}/stderr/{alice_seat}").status_code == 404


def test_a_wrong_token_is_refused_and_counted_as_the_api_counts_it(corner):
    """Wrong secrets under alice's token id count against (this address, alice), on the form as
    on the API: past the limit, alice's token waits here too; a token naming nobody does not
    count against her (arbiter.arena.tokens)."""
    kept = corner.service.tokens.limiter
    corner.service.tokens.limiter = FailureLimiter(max_failures=2)
    alice = corner.tokens["alice"]
    try:
        with httpx.Client(base_url=corner.url, timeout=30) as client:
            csrf = _csrf(client.get("/me").text)
            for guess in (alice + "x", "ba1.0123456789abcdef." + "A" * 43, "ba1.0123456789abcdef." + "B" * 43):
                response = client.post("/me/login", data={"token": guess, "csrf": csrf})
                assert response.status_code in (401, 429) and 'id="message"' in response.text
                assert alice not in response.text
            wrong = alice[:-1] + ("A" if alice[-1] != "A" else "B")  # her id, a wrong secret
            for _ in range(2):
                response = client.post("/me/login", data={"token": wrong, "csrf": csrf})
                assert response.status_code == 401 and 'id="login"' in response.text
            # whoever holds her token id here waits now, her own token too, on the form as on the API
            response = client.post("/me/login", data={"token": alice, "csrf": csrf})
            assert response.status_code == 429 and int(response.headers["Retry-After"]) > 0
            assert "too many failed token attempts" in response.text and 'id="upload"' not in client.get("/me").text
            api = httpx.get(f"{corner.url}/api/submissions/1", headers={"Authorization": f"Bearer {alice}"})
            assert api.status_code == 429
            bob = client.post("/me/login", data={"token": corner.tokens["bob"], "csrf": csrf})
            assert bob.status_code == 303  # another author, from the same address, is not slowed
    finally:
        corner.service.tokens.limiter = kept


def test_the_session_key_is_made_once_private_and_kept(tmp_path):
    first = session_secret(tmp_path / "store")
    path = tmp_path / "store" / "session.key"
    assert len(first) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert session_secret(tmp_path / "store") == first and [p.name for p in path.parent.iterdir()] == ["session.key"]
    path.write_bytes(b"short")
    with pytest.raises(Exception, match="is not 32 bytes"):
        session_secret(tmp_path / "store")


def test_over_https_the_cookie_is_secure_and_a_revoked_author_is_logged_out(corner):
    store = ArenaStore(corner.engine)  # type: ignore[arg-type]
    corner.tokens["dave"] = AuthorTokens(store.engine).issue("dave")
    # behind a proxy that ends TLS, named in the arena file's `proxies`: a Secure cookie
    https = {"X-Forwarded-Proto": "https"}
    proxied = serving(create_app(corner.service, secret=session_secret(corner.folder / "store")), proxies=["127.0.0.1"])
    with proxied as url, httpx.Client(base_url=url, timeout=30, headers=https) as client:
        page = client.get("/me")
        assert "secure" in page.headers["set-cookie"].lower().split("; ")
        login = {"token": corner.tokens["dave"], "csrf": _csrf(page.text)}
        origin = url.replace("http://", "https://")
        session = page.headers["set-cookie"].split(";")[0]  # the client keeps a Secure cookie for https only
        response = client.post("/me/login", data=login, headers={"Origin": origin, "Cookie": session})
        assert response.status_code == 303
        cookie = response.headers["set-cookie"].lower().split("; ")
        assert {"secure", "httponly", "samesite=strict", "path=/"} <= set(cookie)
    # without proxies, nobody's X-Forwarded-Proto is believed
    assert "secure" not in httpx.get(corner.url + "/me", headers=https).headers["set-cookie"].lower().split("; ")
    client, _ = _logged_in(corner, "dave")
    try:
        assert 'id="upload"' in client.get("/me").text
        AuthorTokens(store.engine).revoke("dave")
        page = client.get("/me")
        assert 'id="login"' in page.text and 'id="upload"' not in page.text
        csrf = _csrf(page.text)
        upload = {"bundle": ("davebot.tar.gz", _bot_archive(corner.folder, "davebot").read_bytes(), "application/gzip")}
        assert client.post("/me/submit", data={"csrf": csrf}, files=upload).status_code == 403
        assert "davebot" not in {row.name for row in corner.service.leaderboard().entrants}
    finally:
        client.close()


def _session_cookie(client: httpx.Client) -> str:
    return next(c.value for c in client.cookies.jar if c.name == COOKIE)


def _replayed(corner: Corner, cookie: str) -> str:
    """``/me`` as a thief who copied ``cookie`` sees it."""
    with httpx.Client(base_url=corner.url, timeout=30) as thief:
        thief.cookies.set(COOKIE, cookie, domain="127.0.0.1")
        return thief.get("/me").text


def test_a_stolen_session_dies_with_its_token_even_once_the_author_has_a_new_one(corner):
    """docs/security.md's way to replace a lost token (revoke, then add the author again) ends
    every session of the old one: a thief's copy of the cookie stays dead after the new token is
    made, and the author logs in again with the new token."""
    store = ArenaStore(corner.engine)  # type: ignore[arg-type]
    corner.tokens["erin"] = AuthorTokens(store.engine).issue("erin")
    client, _ = _logged_in(corner, "erin")
    try:
        stolen = _session_cookie(client)
        assert '<b id="meta">erin</b>' in _replayed(corner, stolen)
        AuthorTokens(store.engine).revoke("erin")
        corner.tokens["erin"] = AuthorTokens(store.engine).issue("erin")
        for page in (_replayed(corner, stolen), client.get("/me").text):
            assert 'id="login"' in page and 'id="upload"' not in page
    finally:
        client.close()
    again, _ = _logged_in(corner, "erin")
    again.close()


def test_logging_out_ends_the_session_and_every_copy_of_its_cookie(corner):
    """After ``POST /me/logout`` a replayed cookie opens nothing (nor does the author's other
    browser: a logout ends every session of the author); a new login works, across a restart of
    the server (the epoch is in the database)."""
    store = ArenaStore(corner.engine)  # type: ignore[arg-type]
    corner.tokens["fred"] = AuthorTokens(store.engine).issue("fred")
    client, csrf = _logged_in(corner, "fred")
    other, _ = _logged_in(corner, "fred")
    try:
        copied = _session_cookie(client)
        assert client.post("/me/logout", data={"csrf": csrf}).status_code == 303
        assert 'id="login"' in client.get("/me").text
        for page in (_replayed(corner, copied), other.get("/me").text):
            assert 'id="login"' in page and 'id="upload"' not in page
    finally:
        client.close()
        other.close()
    fresh, _ = _logged_in(corner, "fred")
    try:
        kept = _session_cookie(fresh)
        app = create_app(corner.service, secret=session_secret(corner.folder / "store"))
        with serving(app) as url, httpx.Client(base_url=url, timeout=30) as restarted:
            restarted.cookies.set(COOKIE, kept, domain="127.0.0.1")
            assert '<b id="meta">fred</b>' in restarted.get("/me").text
    finally:
        fresh.close()
