"""The arena's rendered reads (arbiter.arena.snapshots) over real HTTP: a real uvicorn serving
the arena as `arbiter serve` does, over test_api's database (a real tournament of the sample
bots): the same JSON as the service computes, ETag and 304, gzip, and a change seen once its
event reaches the open pages."""

from __future__ import annotations

import gzip
import json
import threading
import time

import httpx

from arbiter.arena.api import create_app
from arbiter.arena.events import EventHub
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens

from .test_api import ARENA, arena, serving  # noqa: F401  (arena: the module's fixture)


def test_the_leaderboard_and_state_are_the_services_own_with_an_etag_and_304(arena):  # noqa: F811
    first = arena.get("/api/leaderboard")
    assert first.status_code == 200 and first.json() == json.loads(arena.service.leaderboard().model_dump_json())
    tag = first.headers["etag"]
    assert tag.startswith('"') and first.headers["cache-control"] == "no-cache"
    again = httpx.get(arena.url + "/api/leaderboard", headers={"If-None-Match": tag}, timeout=30)
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    other = httpx.get(arena.url + "/api/leaderboard", headers={"If-None-Match": '"something else"'}, timeout=30)
    assert other.status_code == 200 and other.json() == first.json()
    assert arena.get("/api/health").json() == {"ok": True}
    state = arena.get("/api/state")
    assert state.json()["matches"] == arena.service.state().matches
    assert httpx.get(arena.url + "/api/state", headers={"If-None-Match": state.headers["etag"]}).status_code == 304


def test_the_page_is_sent_gzipped_to_who_accepts_it_and_scripts_are_tagged(arena):  # noqa: F811
    with httpx.Client(base_url=arena.url, timeout=30, headers={"Accept-Encoding": "identity"}) as plain:
        page = plain.get("/")
        assert "content-encoding" not in page.headers and "<table" in page.text
        raw = httpx.get(arena.url + "/", headers={"Accept-Encoding": "gzip"}, timeout=30)
        assert raw.headers["content-encoding"] == "gzip" and raw.headers["vary"] == "Accept-Encoding"
        assert raw.text == page.text  # httpx unpacked it
        with httpx.stream("GET", arena.url + "/", headers={"Accept-Encoding": "gzip"}, timeout=30) as streamed:
            packed = b"".join(streamed.iter_raw())
        assert len(packed) < len(page.content) and gzip.decompress(packed) == page.content
        script = plain.get("/static/arena.js")
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        assert plain.get("/static/arena.js", headers={"If-None-Match": script.headers["etag"]}).status_code == 304


def test_an_entrants_json_and_page_answer_304_until_the_arena_changes(arena):  # noqa: F811
    hub = EventHub()
    with serving(create_app(arena.service, hub=hub)) as url, httpx.Client(base_url=url, timeout=30) as client:
        for path in ("/api/entrants/alice", "/entrants/alice"):
            first = client.get(path)
            tag = first.headers["etag"]
            assert first.status_code == 200 and tag.startswith('W/"')
            assert client.get(path, headers={"If-None-Match": tag}).status_code == 304
        assert client.get("/api/entrants/nobody").status_code == 404
        assert "etag" not in client.get("/api/entrants/nobody").headers

        # A new version becomes active: the leaderboard shows it once the event reaches the
        # pages, and the entrants' tags change with it.
        store = ArenaStore(arena.engine)
        AuthorTokens(store.engine).issue("zoe")
        row = store.open_submission(ARENA, "zoe", "zoebot", "2" * 64, "python bot.py", house=["heuristic"])
        store.decide(row.id, True, json.dumps({"passed": True}))
        heard: list[str] = []

        def listen() -> None:
            with httpx.stream("GET", url + "/api/events", timeout=30) as events:
                for line in events.iter_lines():
                    if line.startswith("data:"):
                        heard.append(line)
                        names = {e["name"] for e in client.get("/api/leaderboard").json()["entrants"]}
                        heard.append("zoebot" if "zoebot" in names else "not yet")
                        return

        listener = threading.Thread(target=listen)
        listener.start()
        deadline = time.monotonic() + 10
        while hub.subscribers == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        hub.publish({"type": "match", "number": 10**6, "status": "complete"})
        listener.join(30)
        assert heard[-1] == "zoebot", heard  # the event came after the rendering that shows it
        assert client.get("/api/entrants/alice", headers={"If-None-Match": tag}).status_code == 200
        hub.close()
