"""The arena's pages in a real headless Chromium against a real `arbiter serve` process (its own
loop, workers, checker and web server, as tests/arena/test_serve.py starts it): the leaderboard
moves on screen as the server's own matches land, without a reload, and an author's upload from
the browser's corner ends as an active entrant after the server's real check; no console error,
no request to any other origin."""

from __future__ import annotations

import time

from arbiter.arena.archive import pack_folder

from .test_pages import Opened
from .test_serve import TIMEOUT, arena, author, leaderboard, new_bot  # noqa: F401  (arena: the real server)


def test_the_leaderboard_moves_and_an_upload_becomes_active_on_a_real_server(arena, browser):  # noqa: F811
    board = Opened(browser, arena.url + "/", (1400, 900))
    corner: Opened | None = None
    try:
        board.page.wait_for_function("() => document.body.dataset.live === '1'")
        board.page.evaluate("window.sameDocument = true")
        played = int(board.page.inner_text("#played"))
        before = board.page.inner_text("#leaderboard tbody")
        board.page.wait_for_function(
            f"() => Number(document.getElementById('played').textContent) > {played}", timeout=TIMEOUT * 1000
        )
        assert board.page.evaluate("window.sameDocument") is True  # pushed by the server's loop, no reload
        assert board.page.inner_text("#leaderboard tbody") != before
        assert int(board.page.inner_text("#played")) <= arena.get("/api/state")["matches"]

        token = author(arena.folder, "alice").read_text().strip()
        bundle = arena.folder / "alicebot.tar.gz"
        bundle.write_bytes(pack_folder(new_bot(arena.folder, "alicebot")))
        corner = Opened(browser, arena.url + "/me", (1400, 900))
        corner.page.fill("input[name=token]", token)
        corner.page.click("#login button[type=submit]")
        corner.page.wait_for_selector("#upload")
        assert corner.page.inner_text("#meta") == "alice"
        corner.page.set_input_files("input[name=bundle]", str(bundle))
        corner.page.click("#upload button[type=submit]")
        uploaded = corner.page.locator(".submission:has-text('alicebot@1')")
        uploaded.wait_for()
        deadline = time.monotonic() + TIMEOUT
        while uploaded.get_attribute("data-status") == "checking" and time.monotonic() < deadline:
            time.sleep(1)
            corner.page.reload()
        assert uploaded.get_attribute("data-status") == "active", uploaded.inner_text()
        assert uploaded.locator(".steps li.good").count() >= 3 and uploaded.locator(".steps li.bad").count() == 0
        arena.until(lambda: "alicebot@1" in leaderboard(arena), "alicebot@1 on the leaderboard")
        for o in (board, corner):
            assert o.errors == [] and o.outside(arena.url) == []
    finally:
        for o in (board, corner):
            if o is not None:
                o.page.close()
    code, err = arena.stop()
    assert code == 0, err
