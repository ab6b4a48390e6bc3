"""The arena's pages in a real headless Chromium, served by a real uvicorn over the SQLite
database a real tournament filled (tests/arena/test_api.py's arena): the leaderboard moves on
screen when the real loop records matches, without a reload; the entrant page's chart and the
match page's replay draw with no console error and no request to any other origin; a hostile
author's name stays text. Screenshots of each page at 1400×900 and 390×844 go to
test-artifacts/arena/ (the path is printed).
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from arbiter.arena.api import create_app
from arbiter.arena.events import EventHub
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens
from arbiter.tournament.config import override, parse_config
from arbiter.tournament.loop import run_tournament

from ..report.conftest import ARTIFACTS
from .test_api import ARENA, _tournament_file, arena, serving  # noqa: F401  (arena: the module's fixture)

HOSTILE = "<script>window.pwned=1</script><b>eve</b>"
SIZES = {"laptop": (1280, 800), "phone": (390, 844)}
NAV = ["/", "/matches", "/live", "/play", "/me", "/docs"]
SHOTS = ARTIFACTS / "arena"


@dataclasses.dataclass
class Site:
    url: str
    hub: EventHub
    arena: object


@pytest.fixture(scope="module")
def site(arena):  # noqa: F811
    """The arena's app with its pages and a hub the test publishes to, beside test_api's server;
    one more author, with a hostile name, has an active entrant that has not played yet."""
    store = ArenaStore(arena.engine)
    AuthorTokens(store.engine).issue(HOSTILE)
    row = store.open_submission(ARENA, HOSTILE, "mallory", "1" * 64, "python bot.py", house=["heuristic"])
    store.decide(row.id, True, json.dumps({"passed": True}))
    row = store.open_submission(ARENA, "carol", "carol", "2" * 64, "python bot.py", house=["heuristic"])
    store.decide(row.id, False, json.dumps({"passed": False}))  # carol@2: rejected
    hub = EventHub()
    with serving(create_app(arena.service, hub=hub)) as url:
        yield Site(url, hub, arena)
        hub.close()  # open event streams end, so the server can stop


class Opened:
    """A page of the site in the shared browser at a size, with its requests and console errors."""

    def __init__(self, browser, url: str, size: tuple[int, int]):
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page()
        self.page.set_viewport_size({"width": size[0], "height": size[1]})
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def outside(self, origin: str) -> list[str]:
        return [u for u in self.requests if not u.startswith(origin + "/")]


@pytest.fixture
def opened(browser) -> Iterator:
    pages: list[Opened] = []

    def open_page(url: str, size: tuple[int, int] = SIZES["laptop"]) -> Opened:
        pages.append(Opened(browser, url, size))
        return pages[-1]

    yield open_page
    for p in pages:
        p.page.close()


def _shoot(o: Opened, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    o.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    print(f"screenshot: {path}")


def _fits(o: Opened, width: int) -> None:
    """Nothing wider than the screen. At a laptop's width no panel cuts its table; at a phone's, a
    table wider than the screen scrolls inside its panel, whose edge shadows say so (a list of
    matches turns into cards instead)."""
    assert o.page.evaluate("document.documentElement.scrollWidth") <= width
    cut = o.page.evaluate(
        """() => Array.from(document.querySelectorAll('.panel, .scroll')).filter(p => p.offsetParent)
            .filter(p => p.scrollWidth > p.clientWidth + 1)
            .map(p => [p.id || p.className, getComputedStyle(p).overflowX, getComputedStyle(p).backgroundImage])"""
    )
    if width >= 1280:
        assert cut == [], f"cut off at {width} px: {cut}"
    for where, overflow, background in cut:
        assert overflow == "auto" and "radial-gradient" in background, f"{where} scrolls without a cue"
    if width < 600:  # lists of matches are cards: no column heads, each cell labelled
        assert o.page.locator("table.cards thead").evaluate_all("els => els.filter(e => e.offsetParent).length") == 0


def _navigates(o: Opened, here: str | None) -> None:
    links = o.page.locator("nav.links a")
    assert links.evaluate_all("els => els.map(e => e.getAttribute('href'))") == NAV
    current = o.page.locator("nav.links a[aria-current=page]").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    )
    assert current == ([here] if here else [])
    assert all(link.is_visible() for link in links.all())


def test_the_leaderboard_is_complete_as_served(site):
    html = httpx.get(site.url + "/", timeout=30).text
    board = httpx.get(site.url + "/api/leaderboard", timeout=30).json()
    state = httpx.get(site.url + "/api/state", timeout=30).json()
    for row in board["entrants"]:
        assert f'data-entrant="{row["name"]}@{row["version"]}"' in html
        assert f'href="/entrants/{row["name"]}"' in html
        assert f"{row['mu']:.2f}".replace("-", "−") in html and f'data-value="{row["margin"]}"' in html
    provisional = [r for r in board["entrants"] if r["provisional"]]
    assert html.count('<span class="provisional"') == len(provisional)
    assert "Ranked by TrueSkill's μ, not μ−3σ" in html
    assert f'<b id="played">{state["matches"]}</b>' in html
    assert "<polyline points=" in html  # the trends of the versions that have played
    assert "img-src data:; connect-src 'self';" in html  # the page may fetch from the arena alone


def test_the_leaderboard_moves_when_matches_land_without_a_reload(site, opened):
    o = opened(site.url + "/")
    o.page.wait_for_function("() => document.body.dataset.live === '1'")
    played = int(o.page.inner_text("#played"))
    before = o.page.inner_text("#leaderboard tbody")
    o.page.evaluate("window.sameDocument = true")
    # sorting: by matches, most first; then back by rank
    o.page.click("#leaderboard th:nth-child(6)")
    counts = o.page.locator("#leaderboard tbody td:nth-child(6)").all_inner_texts()
    assert counts == sorted(counts, key=int, reverse=True) and counts[-1] == "0"
    o.page.click("#leaderboard th:nth-child(1)")
    ranks = o.page.locator("#leaderboard tbody td:nth-child(1)").all_inner_texts()
    assert ranks == [str(i) for i in range(1, len(ranks) + 1)]

    class Publisher:  # what `arbiter serve` does in ArenaHost.match_done
        def started(self, run):
            pass

        def match_done(self, run, m, outcome):
            site.hub.publish({"type": "match", "number": m.number, "status": outcome.result.status})

        def stopped(self, run):
            pass

    folder = site.arena.folder
    config = parse_config(_tournament_file(folder), display="arena.yaml", base_dir=folder)
    versioned = [dataclasses.replace(e, name=f"{e.name}@1") for e in config.entrants]
    summary = run_tournament(
        override(config, entrants=versioned, rounds=2), database=f"sqlite:///{folder / 'arena.db'}", jobs=2,
        observers=[Publisher()],
    )  # fmt: skip
    assert summary.played > 0
    total = played + summary.played
    deadline = time.monotonic() + 30  # the state is rendered once the last match's event came
    while httpx.get(site.url + "/api/state", timeout=30).json()["matches"] != total and time.monotonic() < deadline:
        time.sleep(0.05)
    assert httpx.get(site.url + "/api/state", timeout=30).json()["matches"] == total
    o.page.wait_for_function(f"() => document.getElementById('played').textContent === '{total}'", timeout=30_000)
    assert o.page.evaluate("window.sameDocument") is True  # no reload
    assert o.page.inner_text("#leaderboard tbody") != before
    assert o.page.locator("#leaderboard tbody tr.fresh").count() > 0
    assert o.errors == [] and o.outside(site.url) == []


def test_an_entrant_page_draws_its_chart(site, opened):
    entrant = httpx.get(site.url + "/api/entrants/alice", timeout=30).json()
    played = sorted({p["version"] for p in entrant["history"]})
    assert played
    for name, size in SIZES.items():
        o = opened(site.url + "/entrants/alice", size)
        lines = o.page.locator("#rating-chart polyline.mu")
        assert lines.count() == len(played)
        box = lines.first.bounding_box()
        assert box is not None and box["width"] > size[0] / 6
        assert o.page.locator("#versions tbody tr").count() == len(entrant["versions"])
        links = o.page.locator("#recent a.replay").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert links == [f"/matches/{m['id']}" for m in entrant["recent_matches"]]
        assert o.page.locator("#head-to-head tbody tr").count() > 0
        assert o.page.locator("#contracts tbody tr").count() > 0
        doubled = o.page.locator("#doubling tbody tr").evaluate_all("els => els.map(e => e.dataset.version)")
        assert doubled == [str(v) for v in sorted(map(int, entrant["doubling"]["by_version"]), reverse=True)]
        first = entrant["doubling"]["by_version"]["1"]
        made = o.page.inner_text("#doubling tbody tr[data-version='1'] td:nth-child(2)")
        assert made.split() == [str(first["doubles"]), "/", str(first["redoubles"])]
        _fits(o, size[0])
        _navigates(o, None)
        _shoot(o, f"entrant-{name}")
        assert o.errors == [] and o.outside(site.url) == []


def test_a_match_page_replays_the_log_with_its_seats_linked(site, opened):
    match = httpx.get(site.url + "/api/matches", params={"limit": 1}, timeout=30).json()["matches"][0]
    log = httpx.get(site.url + f"/api/matches/{match['id']}/log", timeout=30).content
    for name, size in SIZES.items():
        o = opened(site.url + f"/matches/{match['id']}", size)
        o.page.wait_for_function("() => window.barbuReplay && document.body.dataset.step !== undefined")
        assert o.page.evaluate("barbuReplay.data.log.length") == len(log.decode().splitlines())
        o.page.keyboard.press("End")
        assert o.page.locator("#chart svg polyline").count() == 4
        final = o.page.locator("#final-result tr")  # the last frame is the final result
        assert final.count() == 4 and all(name in o.page.inner_text("#final-result") for name in ("S0", "S3"))
        if name == "phone":  # cards large enough to read: 52% of their laptop size, not 44%
            o.page.keyboard.press("Home")
            card = o.page.locator("#table .card").first.bounding_box()
            assert card is not None and card["width"] >= 23, card  # 20 px before
        options = o.page.locator("#speed option").evaluate_all("els => els.map(e => e.textContent)")
        assert options == ["1×", "4×", "16×", "a deal at a time"]
        seats = o.page.locator("#arena-bar .seat a.ent").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert seats == [f"/entrants/{s['name']}" for s in match["seats"]]
        download = o.page.locator("#arena-bar a.download")
        assert download.get_attribute("href") == f"/api/matches/{match['id']}/log"
        _fits(o, size[0])
        _navigates(o, None)
        assert o.page.title().startswith(f"Match {match['id']} — ")
        assert download.get_attribute("download") == f"match-{match['id']}.jsonl"
        _shoot(o, f"match-{name}")
        assert o.errors == [] and o.outside(site.url) == []
    fetched = httpx.get(site.url + download.get_attribute("href"), timeout=30)
    assert fetched.content == log


def test_the_leaderboard_at_both_sizes(site, opened):
    for name, size in SIZES.items():
        o = opened(site.url + "/", size)
        o.page.wait_for_function("() => document.body.dataset.live === '1'")
        assert o.page.locator("#leaderboard tbody tr").count() == len(
            httpx.get(site.url + "/api/leaderboard", timeout=30).json()["entrants"]
        )
        _fits(o, size[0])
        _navigates(o, "/")
        if name == "phone":  # the key columns stay in sight: rank, entrant, μ (what orders it)
            for column in (1, 2, 4):
                box = o.page.locator(f"#leaderboard tbody tr:first-child td:nth-child({column})").bounding_box()
                assert box is not None and box["x"] + box["width"] <= size[0], column
        _shoot(o, f"leaderboard-{name}")
        assert o.errors == [] and o.outside(site.url) == []


def test_a_hostile_author_name_stays_text(site, opened):
    for path in ("/", "/entrants/mallory"):
        html = httpx.get(site.url + path, timeout=30).text
        assert HOSTILE not in html and "&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;b&gt;eve&lt;/b&gt;" in html
        o = opened(site.url + path)
        assert HOSTILE in o.page.inner_text("body")
        assert o.page.evaluate("window.pwned") is None
        assert o.page.locator("b:text-is('eve')").count() == 0
        assert o.errors == []


def test_what_is_not_there_is_a_page_that_says_so(site):
    for path in ("/entrants/nobody", "/matches/999999"):
        r = httpx.get(site.url + path, timeout=30)
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
        assert "Back to the leaderboard" in r.text


def test_events_reach_every_stream_and_end_when_the_hub_closes(site):
    hub = EventHub()
    with (
        serving(create_app(site.arena.service, hub=hub)) as url,
        httpx.stream("GET", url + "/api/events", timeout=30) as r,
    ):
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = r.iter_lines()
        assert next(lines) == "retry: 3000"
        deadline = time.monotonic() + 10
        while hub.subscribers == 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        threading.Thread(target=hub.publish, args=({"type": "match", "number": 7, "status": "complete"},)).start()
        data = next(line for line in lines if line.startswith("data:"))
        assert json.loads(data.removeprefix("data:")) == {"type": "match", "number": 7, "status": "complete"}
        hub.close()
        assert [line for line in lines if line] == []  # the stream ends
    assert hub.subscribers == 0


def test_the_pages_run_their_own_scripts_only_and_are_never_framed(site, opened):
    """In Chromium, under the arena's Content-Security-Policy header: the leaderboard's and the
    replay's scripts (files of the arena) run, a script written into the page inline does not
    (a violation is reported instead), and a page of another origin cannot frame the arena."""
    match = httpx.get(site.url + "/api/matches", params={"limit": 1}, timeout=30).json()["matches"][0]
    inject = """() => new Promise(done => {
        document.addEventListener("securitypolicyviolation", e => done(e.violatedDirective), {once: true});
        const s = document.createElement("script");
        s.textContent = "window.inlineRan = 1";
        document.body.appendChild(s);
        setTimeout(() => done(window.inlineRan === 1 ? "ran" : "no report"), 3000);
    })"""
    for path, ready in (("/", "document.body.dataset.live === '1'"), (f"/matches/{match['id']}", "window.barbuReplay")):
        o = opened(site.url + path)
        o.page.wait_for_function(f"() => {ready}")
        assert o.page.evaluate(inject).startswith("script-src")
        assert o.page.evaluate("window.inlineRan") is None
        assert o.outside(site.url) == []

    frame = f'<!doctype html><iframe id="f" src="{site.url}/" width="800" height="600"></iframe>'.encode()

    class Framer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(frame)

        def log_message(self, *args: object) -> None:
            pass

    framer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Framer)
    threading.Thread(target=framer.serve_forever, daemon=True).start()
    try:
        o = opened(f"http://127.0.0.1:{framer.server_address[1]}/")
        o.page.wait_for_timeout(1500)
        framed = [f for f in o.page.frames if f != o.page.main_frame]
        assert framed and all(f.evaluate("document.getElementById('leaderboard') === null") for f in framed)
    finally:
        framer.shutdown()
        framer.server_close()


def test_the_matches_page_filters_and_pages_by_keyset(site, opened):
    """/matches: every match, the highest id first, a page at a time through "older", the same
    ids as the API's; filtered by entrant, version and time; each linked to its replay."""
    listed = [
        m["id"] for m in httpx.get(site.url + "/api/matches", params={"limit": 200}, timeout=30).json()["matches"]
    ]
    assert listed == sorted(listed, reverse=True) and len(listed) > 5
    o = opened(site.url + "/matches?limit=5")
    seen: list[int] = []
    while True:
        ids = [
            int(i) for i in o.page.locator("#match-list tbody tr").evaluate_all("els => els.map(e => e.dataset.match)")
        ]
        assert 0 < len(ids) <= 5
        hrefs = o.page.locator("#match-list td.id a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert hrefs == [f"/matches/{i}" for i in ids]
        seen += ids
        if o.page.locator("#older").count() == 0:
            break
        o.page.click("#older")
        assert o.page.locator("#newest").count() == 1
    assert seen == listed
    _navigates(o, "/matches")

    o.page.goto(site.url + "/matches")
    o.page.fill("input[name=entrant]", "bob")
    o.page.fill("input[name=version]", "1")
    o.page.click("form.filters button[type=submit]")
    o.page.wait_for_url("**/matches?entrant=bob&version=1*")
    rows = o.page.locator("#match-list tbody tr")
    texts = rows.evaluate_all("els => els.map(e => e.textContent)")
    assert rows.count() == min(len(listed), 50) and all("bob@1" in t for t in texts)
    for path, absent in (
        ("/matches?entrant=bob&until=2000-01-01", "#match-list"),
        ("/matches?since=2999-01-01", "#match-list"),
    ):
        o.page.goto(site.url + path)
        assert o.page.locator(absent).count() == 0 and "with these filters" in o.page.inner_text("#no-match")
    assert httpx.get(site.url + "/matches?entrant=nobody", timeout=30).status_code == 404
    assert httpx.get(site.url + "/matches?version=1", timeout=30).status_code == 400
    api = httpx.get(site.url + "/api/matches", params={"entrant": "bob", "version": 1, "limit": 3}, timeout=30).json()
    assert [m["id"] for m in api["matches"]] == listed[:3] and api["next_before"] == listed[2]
    for size_name, size in SIZES.items():
        page = opened(site.url + "/matches?limit=20", size)
        _fits(page, size[0])
        _shoot(page, f"matches-{size_name}")
        assert page.errors == [] and page.outside(site.url) == []
    assert o.errors == [] and o.outside(site.url) == []


def test_live_shows_the_matches_in_play_and_follows_them(site, opened):
    """/live: the matches the loop has in play, their seats linked, replaced on each event by what
    is in play then, without a reload."""
    from arbiter.arena.service import ArenaService
    from arbiter.model import ScheduledMatch

    in_play = [ScheduledMatch(899, "900", 225, 0, 3, 225, ("alice@2", "bob@1", "heuristic@1", "alice@2"), 1, 0)]
    service = ArenaService(
        site.arena.engine, ARENA, site.arena.folder / "logs", uploads=site.arena.service.uploads, house=["heuristic"],
        in_flight=lambda: len(in_play), in_play=lambda: list(in_play),
    )  # fmt: skip
    hub = EventHub()
    with serving(create_app(service, hub=hub)) as url:
        for name, size in SIZES.items():
            o = opened(url + "/live", size)
            o.page.wait_for_function("() => document.body.dataset.live === '1'")
            row = o.page.locator("#in-play tr[data-match='900']")
            assert row.count() == 1 and o.page.inner_text("#in-flight") == "1"
            seats = row.locator("a.ent").evaluate_all("els => els.map(e => e.getAttribute('href'))")
            assert seats == ["/entrants/alice", "/entrants/bob", "/entrants/heuristic", "/entrants/alice"]
            assert o.page.locator("#just-played tr[data-match]").count() == 10
            _navigates(o, "/live")
            _fits(o, size[0])
            _shoot(o, f"live-{name}")
            assert o.errors == [] and o.outside(url) == []
        o.page.evaluate("window.sameDocument = true")
        in_play[:] = []
        hub.publish({"type": "match", "id": 900, "status": "complete"})
        o.page.wait_for_function("() => document.querySelector('#in-play tr[data-match]') === null")
        assert o.page.evaluate("window.sameDocument") is True and o.page.inner_text("#in-flight") == "0"
        hub.close()


def test_the_api_docs_are_served_by_the_arena_itself(site, opened):
    """/docs: every operation of /openapi.json with its parameters, readable with nothing loaded
    from anywhere else (FastAPI's own pages fetch their scripts from a CDN)."""
    schema = httpx.get(site.url + "/openapi.json", timeout=30).json()
    operations = [(m.upper(), path) for path, item in schema["paths"].items() for m in item]
    for name, size in SIZES.items():
        o = opened(site.url + "/docs", size)
        shown = [tuple(h.split(" ", 1)) for h in o.page.locator(".op h3").evaluate_all(
            "els => els.map(e => e.querySelector('.method').textContent + ' ' + e.querySelector('code').textContent)"
        )]  # fmt: skip
        assert sorted(shown) == sorted(operations)
        matches = o.page.locator("#get--api-matches")
        for param in ("entrant", "version", "since", "until", "before", "limit"):
            assert matches.locator(f"td code:text-is('{param}')").count() == 1, param
        assert o.page.locator("#post--api-submissions .auth").count() == 1
        _navigates(o, "/docs")
        _fits(o, size[0])
        _shoot(o, f"docs-{name}")
        assert o.errors == [] and o.outside(site.url) == [] and len(o.requests) == 1


def test_a_chart_starts_each_version_at_mu0_where_it_joined_in_its_sigma_band(site, opened):
    """The entrant's chart: μ₀ = 25 dashed where 25 is (not at the first point), each version's line
    starting there just before its first rated game, in a band of ±σ; a rejected version shows no
    rating."""
    entrant = httpx.get(site.url + "/api/entrants/alice", timeout=30).json()
    o = opened(site.url + "/entrants/alice")
    lines = o.page.locator("#rating-chart polyline.mu")
    assert o.page.locator("#rating-chart polygon.band").count() == lines.count() > 0
    mu0 = float(o.page.get_attribute("#rating-chart line.mu0", "y1"))
    ticks = o.page.locator("#rating-chart text.ylab").evaluate_all(
        "els => els.map(e => [e.textContent, +e.getAttribute('y')])"
    )
    (v0, y0), (v1, y1) = [(float(label.replace("−", "-")), y - 4) for label, y in (ticks[0], ticks[-1])]
    y25 = y0 + (25 - v0) * (y1 - y0) / (v1 - v0)  # between two labelled ticks (a label sits 4 px below its line)
    assert abs(mu0 - y25) < 0.2
    for line in lines.all():
        first = line.get_attribute("points").split()[0].split(",")
        assert abs(float(first[1]) - mu0) < 0.2  # every version starts at μ₀
    firsts = {}
    for p in entrant["history"]:
        firsts.setdefault(p["version"], p["match_number"])
    assert len(set(firsts.values())) == len(firsts)  # the versions joined at different matches
    carol = opened(site.url + "/entrants/carol")
    rejected = carol.page.locator("#versions tr[data-version='2']")
    assert "rejected" in rejected.inner_text() and "25.00" not in rejected.inner_text()
    assert "−0.00" not in rejected.inner_text() and "0.00" not in rejected.inner_text()


def test_the_replay_plays_at_each_speed_and_a_deal_at_a_time(site, opened):
    match = httpx.get(site.url + "/api/matches", params={"limit": 1}, timeout=30).json()["matches"][0]
    o = opened(site.url + f"/matches/{match['id']}")
    o.page.wait_for_function("() => window.barbuReplay && document.body.dataset.step !== undefined")
    o.page.select_option("#speed", "deal")
    o.page.click("#play")
    o.page.wait_for_function("() => barbuReplay.cur > 0", timeout=10_000)
    deal = o.page.evaluate("barbuReplay.data.steps[barbuReplay.cur].d")
    assert deal >= 1 and o.page.evaluate("barbuReplay.data.deals[0].first") == 0  # it jumped a whole deal
    o.page.click("#play")  # pause
    o.page.keyboard.press("Home")
    o.page.select_option("#speed", "40")
    started = o.page.evaluate("Date.now()")
    o.page.click("#play")
    o.page.wait_for_function("() => barbuReplay.cur >= 20", timeout=10_000)
    elapsed = o.page.evaluate("Date.now()") - started
    o.page.click("#play")
    assert elapsed < 20 * 650  # far faster than 1×: 20 steps at 16× take 0.8 s, at 1× 13 s
    assert o.errors == [] and o.outside(site.url) == []
