"""`/play` on a real `arbiter serve` (its loop, workers and web server, real bots, SQLite): a
visitor takes a seat against the top of the leaderboard, plays the match to its end through the
table's API, and the match is logged and replayable apart, never recorded nor rated; a browser
holds one table at a time, and the arena's `human_tables` bounds the tables at once."""

from __future__ import annotations

import http.cookiejar
import urllib.error
import urllib.request

from ..arena.test_serve import Server, leaderboard, recorded, write_arena
from .conftest import TableClient, verify


def _browser() -> urllib.request.OpenerDirector:
    """A client with a cookie jar that does not follow redirects (we read them)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect)


def _sit(opener, url: str) -> tuple[int, str]:
    request = urllib.request.Request(url + "/play", data=b"", method="POST")
    try:
        with opener.open(request, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location") or e.read().decode()


def test_a_visitor_plays_the_champions_and_the_match_is_kept_apart_unrated(tmp_path, browser):
    path = write_arena(tmp_path)
    path.write_text(path.read_text() + "human_tables: 1\n")
    server = Server(tmp_path)
    try:
        page = urllib.request.urlopen(server.url + "/play", timeout=30).read().decode()
        assert 'id="sit"' in page and "heuristic@1" in page and "random@1" in page
        visitor, other = _browser(), _browser()
        code, where = _sit(visitor, server.url)
        assert code == 303 and where.startswith("/play/"), where
        assert _sit(visitor, server.url)[0] == 409  # one table per browser
        code, text = _sit(other, server.url)
        assert code == 409 and "all 1 tables for people are taken" in text
        table = TableClient(server.url + where)
        first = table.next_request()
        _page_shows_the_decision(browser, server.url + where)
        assert first["names"][0] == "visitor" and first["time_control"] == {"per_decision": 60.0, "reserve": 600.0}
        assert [n.split("#")[1] for n in first["names"][1:]] == ["1", "2", "3"]
        assert {n.split("#")[0] for n in first["names"][1:]} <= {"heuristic@1", "random@1"}
        last = table.play_out()
        assert last["status"] == "over" and last["ended"]["verdict"].startswith("valid: complete"), last["ended"]
        logs = list((tmp_path / "matches" / "human").glob("human-*.jsonl"))
        assert len(logs) == 1 and verify(logs[0])["complete"]
        listing = urllib.request.urlopen(server.url + "/play", timeout=30).read().decode()
        name = logs[0].name.removesuffix(".jsonl")
        assert f'href="/play/matches/{name}"' in listing
        replay = urllib.request.urlopen(f"{server.url}/play/matches/{name}", timeout=30)
        assert replay.status == 200 and "Barbu replay" in replay.read().decode()
        assert all("human" not in str(row[4]) for row in recorded(tmp_path))  # never recorded, so never rated
        assert all("visitor" not in n for n in leaderboard(server))
        assert _sit(other, server.url)[0] == 303  # the table is free again
    finally:
        code, err = server.stop()
    assert code == 0, err[-3000:]


def _page_shows_the_decision(browser, url: str) -> None:
    """The table page under the arena's own policy: its script runs, the decision is offered."""
    errors: list[str] = []
    page = browser.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        page.wait_for_selector(".t-choices button, .t-hand button.legal", timeout=60_000)
        assert errors == []
    finally:
        page.close()
