"""API processes apart from the ladder (arbiter.arena.replicas), end to end: a real `arbiter serve`
running the ladder on a real PostgreSQL database, and a real `arbiter serve --api-only` beside
it; real bots, real HTTP."""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx

from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures reused here

from .test_serve import TIMEOUT, Server, arbiter, author, new_bot, write_arena


def _same(ladder: Server, api: Server, path: str) -> dict:
    """``path``'s JSON, once both processes answer it alike (the ladder records matches meanwhile)."""
    found: list[dict] = [{}, {}]

    def alike() -> bool:
        both = [
            threading.Thread(target=lambda i=i, s=s: found.__setitem__(i, s.get(path)))
            for i, s in enumerate((ladder, api))
        ]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join(TIMEOUT)
        return found[0] == found[1]

    api.until(alike, f"{path} alike in both processes")
    return found[0]


def test_an_api_only_process_serves_the_ladders_json_sees_matches_live_and_its_uploads_are_checked(
    tmp_path,
    pg_url,  # noqa: F811
):
    arena_file = write_arena(tmp_path)
    text = arena_file.read_text().replace(f"database: {tmp_path}/arena.db", f"database: {pg_url}")
    arena_file.write_text(text.replace("parallelism: 2", "parallelism: 1"))  # matches land further apart
    ladder = Server(tmp_path)
    api = Server(tmp_path, "--api-only", "--web", "127.0.0.1:0")
    try:
        assert "the API only" in api.stderr
        ladder.until(lambda: ladder.get("/api/state")["matches"] >= 2, "two matches")
        board = _same(ladder, api, "/api/leaderboard")
        assert {e["name"] for e in board["entrants"]} == {"heuristic", "random"}
        _same(ladder, api, "/api/entrants/heuristic")

        # live: a match the ladder records reaches the API process's open pages
        heard: list[dict] = []

        def listen() -> None:
            with httpx.stream("GET", api.url + "/api/events", timeout=TIMEOUT) as events:
                for line in events.iter_lines():
                    if line.startswith("data:"):
                        heard.append(json.loads(line.removeprefix("data:")))
                        heard.append(api.get("/api/state"))
                        return

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        listener.join(TIMEOUT)
        event, state = heard
        assert (
            event["type"] == "match" and state["matches"] >= event["id"]
        )  # rendered before it was sent (id: the match's place from 1)

        # an upload to the API process is checked by the ladder's, once, and joins the ladder
        token = author(tmp_path, "alice")
        bot = new_bot(tmp_path, "alicebot")
        sent = arbiter(tmp_path, "submit", str(bot), "--arena", api.url, "--token-file", str(token), "--wait", "--json")
        assert sent.returncode == 0, sent.stderr
        assert json.loads(sent.stdout)["status"] == "active"
        api.until(lambda: "alicebot" in {e["name"] for e in api.get("/api/leaderboard")["entrants"]}, "alicebot listed")
        assert ladder.stderr.count("submission 1 (alicebot@1)") <= 1
    finally:
        for server in (api, ladder):
            if server.proc.poll() is None:
                server.stop(signal.SIGTERM)
    assert api.proc.returncode == 0 and ladder.proc.returncode == 0, (api.stderr, ladder.stderr)


def test_api_only_refuses_sqlite_in_one_line(tmp_path):
    write_arena(tmp_path)
    started = time.monotonic()
    refused = arbiter(tmp_path, "serve", str(tmp_path / "arena.yaml"), "--api-only")
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), refused.stderr
    assert "PostgreSQL" in lines[0] and time.monotonic() - started < TIMEOUT
