"""Choosing whom to play in the arena: an author plays their own bot from the corner (in a real
headless Chromium), a visitor picks three active versions on an entrant's page (over HTTP), and
every page's navigation leads to ``/play``. A real uvicorn serves create_app with its people's
tables over a real SQLite database holding real authors and submissions; each table seats real
bot processes (the sample bots), its seats' names read from the table's own API. The tables are
left unplayed: the test ends them (playing one through is tests/human/test_arena_play.py's)."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import time
from pathlib import Path

import httpx
import pytest

from arbiter.arena.api import create_app
from arbiter.arena.corner import session_secret
from arbiter.arena.events import EventHub
from arbiter.arena.play import HumanTables
from arbiter.arena.quotas import Uploads
from arbiter.arena.service import ArenaService
from arbiter.storage import open_database
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens
from arbiter.tournament.config import parse_config

from ..arena.test_api import ARENA, _tournament_file, serving
from .conftest import TableClient

KEPT = 3  # the site's tables keep this many logs, so that the test sees the oldest go
OLD_LOGS = [f"human-20200101-00000{n}-1" for n in range(4)]  # oldest first


@dataclasses.dataclass
class Site:
    url: str
    tokens: dict[str, str]
    logs: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """alice@1 and bob@1 active (with the house's heuristic@1); bob@2 rejected by its check,
    carol@1 retired; four old person's logs in the human folder."""
    folder = tmp_path_factory.mktemp("arena")
    config = parse_config(_tournament_file(folder), display="arena.yaml", base_dir=folder)
    engine = open_database(f"sqlite:///{folder / 'arena.db'}")
    store = ArenaStore(engine)
    tokens = {name: AuthorTokens(engine).issue(name) for name in ("alice", "bob", "carol")}
    for author, passed in (("alice", True), ("bob", True), ("bob", False), ("carol", True)):
        row = store.open_submission(ARENA, author, author, "0" * 64, "python bot.py", house=["heuristic"])
        store.decide(row.id, passed, json.dumps({"ok": passed}))
    store.retire(ARENA, "carol", "carol")
    logs = Path(config.log_folder) / "human"
    logs.mkdir(parents=True)
    for age, name in enumerate(reversed(OLD_LOGS), 1):
        (logs / f"{name}.jsonl").write_text("{}\n")
        os.utime(logs / f"{name}.jsonl", (time.time() - 86400 * age,) * 2)
    versions = {f"{e.name}@1": dataclasses.replace(e, name=f"{e.name}@1") for e in config.entrants}
    uploads = Uploads(ARENA, store, folder / "store", enqueue=lambda _: None, house=["heuristic"])
    service = ArenaService(engine, ARENA, folder / "logs", uploads=uploads, house=["heuristic"])
    tables = HumanTables(config, service, versions.get, capacity=4, kept=KEPT)
    hub = EventHub()
    try:
        with serving(create_app(service, hub=hub, secret=session_secret(folder / "store"), tables=tables)) as url:
            yield Site(url, tokens, logs)
    finally:
        tables.close()
        hub.close()


def test_an_author_plays_their_own_bot_from_the_corner(site, browser):
    page = browser.new_page()
    try:
        page.goto(site.url + "/me")
        page.fill("input[name=token]", site.tokens["alice"])
        page.click("#login button[type=submit]")
        page.wait_for_selector("#play-mine")
        assert page.locator("#play-mine option").all_inner_texts() == ["alice@1"]  # only its own, active
        page.click("#play-mine button[type=submit]")
        page.wait_for_url(re.compile(r"/play/[^/]+/$"))
        page.wait_for_function("() => document.getElementById('t-who').textContent.includes('against')")
        assert page.inner_text("#t-who") == "You (seat 0) against alice@1#1, alice@1#2, alice@1#3"
        names = TableClient(page.url).state()["names"]
        assert names == ["alice", "alice@1#1", "alice@1#2", "alice@1#3"]  # the author sits under their name
    finally:
        page.close()
    elsewhere = _logged_in(site, "alice")  # another browser, the same author: still one table
    csrf = _csrf(elsewhere.get("/me").text)
    refused = elsewhere.post("/me/play", data={"version": "alice@1", "csrf": csrf})
    assert refused.status_code == 409 and "you already have a table in play" in refused.text
    bob = _logged_in(site, "bob")
    csrf = _csrf(bob.get("/me").text)
    refused = bob.post("/me/play", data={"version": "alice@1", "csrf": csrf})  # not bob's
    assert refused.status_code == 400 and "is not an active version of yours" in html.unescape(refused.text)
    assert bob.post("/me/play", data={"version": "bob@1"}).status_code == 403  # no CSRF token


def test_an_entrant_page_seats_the_versions_chosen_and_refuses_inactive_ones(site):
    visitor = httpx.Client(base_url=site.url, timeout=30)
    page = visitor.get("/entrants/bob").text
    form = page[page.index('id="sit-with"') :]
    assert re.findall(r"<option selected>([^<]+)</option>", form) == ["bob@1", "alice@1", "heuristic@1"]
    assert set(re.findall(r"<option[^>]*>([^<]+)</option>", form)) == {"alice@1", "bob@1", "heuristic@1"}
    assert "carol has no active version to play" in visitor.get("/entrants/carol").text
    for seats, said in (
        (["bob@2", "alice@1", "heuristic@1"], "'bob@2' is not an active version"),  # rejected by its check
        (["bob@1", "carol@1", "heuristic@1"], "'carol@1' is not an active version"),  # retired
        (["bob@1", "nobody@1", "bob@1"], "'nobody@1' is not an active version"),
        (["bob@1", "alice@1"], "choose 3 versions, one for each bot's seat (you chose 2)"),
    ):
        refused = visitor.post("/play", data={"seat": seats})
        assert refused.status_code == 400 and said in html.unescape(refused.text), refused.text
    sat = visitor.post("/play", data={"seat": ["bob@1", "heuristic@1", "bob@1"]})
    assert sat.status_code == 303, sat.text
    names = TableClient(site.url + sat.headers["location"]).state()["names"]
    assert names == ["visitor", "bob@1#1", "heuristic@1#2", "bob@1#3"]
    again = visitor.post("/play", data={"seat": ["alice@1"] * 3})
    assert again.status_code == 409 and "you already have a table in play" in again.text  # one per browser
    # opening a table kept the newest logs of the human folder (KEPT, the new one's place among them)
    assert sorted(p.stem for p in site.logs.glob("human-*.jsonl")) == OLD_LOGS[-(KEPT - 1) :]
    listed = visitor.get("/play").text
    assert '<a href="/play" aria-current="page">Play</a>' in listed and OLD_LOGS[0] not in listed
    assert f'href="/play/matches/{OLD_LOGS[-1]}"' in listed


def _logged_in(site: Site, author: str) -> httpx.Client:
    client = httpx.Client(base_url=site.url, timeout=30)
    answer = client.post("/me/login", data={"token": site.tokens[author], "csrf": _csrf(client.get("/me").text)})
    assert answer.status_code == 303, answer.text
    return client


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)
