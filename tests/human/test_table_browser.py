"""The table page in a real headless Chromium against a real `arbiter play`: a person plays a
whole short match by clicking (and once by keyboard) at phone width, only legal cards can be
chosen, the end shows the summary and the replay of the match, whose log verifies; a closed tab
forfeits the seat once no page has asked for the table for a (short) while. No console error, no request elsewhere."""

from __future__ import annotations

import json

from .conftest import ARTIFACTS, verify

PHONE = {"width": 390, "height": 844}
WAIT = 60_000  # ms: the machine may be loaded


class Page:
    def __init__(self, browser, url: str, size: dict[str, int]):
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page()
        self.page.set_viewport_size(size)
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def wait_turn(self, after: str) -> str:
        """The id of the next decision asked of the person ('' once the match is over)."""
        self.page.wait_for_function(
            "() => document.body.dataset.status === 'over' || "
            f"((document.body.dataset.request || '') !== '' && document.body.dataset.request !== '{after}')",
            timeout=WAIT,
        )
        return self.page.evaluate("document.body.dataset.request")

    def shoot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000
        print(f"screenshot: {path}")


def _enabled(page) -> list[str]:
    return page.eval_on_selector_all(".t-hand button.card:not([disabled])", "els => els.map(e => e.dataset.key)")


def test_a_person_plays_a_whole_match_in_the_browser_at_phone_width(start_table, browser):
    table = start_table("--linger", "120")
    p = Page(browser, table.url, PHONE)
    try:
        request, turns, refused_click, by_keyboard = "", 0, False, False
        while (request := p.wait_turn(request)) != "":
            state = table.state()
            assert str(state["request"]["id"]) == request
            legal_cards = {c["key"] for c in state["request"]["choices"] if c["key"].startswith("c")}
            assert set(_enabled(p.page)) == legal_cards  # exactly the legal cards can be clicked
            held = p.page.locator(".t-hand button.card").count()
            assert held == len(state["view"]["hand"])
            if legal_cards and held > len(legal_cards) and not refused_click:
                posts = sum("api/choose" in u for u in p.requests)
                p.page.locator(".t-hand button.card[disabled]").first.click(force=True)  # an illegal card
                p.page.wait_for_timeout(300)
                assert sum("api/choose" in u for u in p.requests) == posts
                assert p.page.evaluate("document.body.dataset.request") == request
                refused_click = True
                p.shoot("phone-390")
                assert p.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            if legal_cards and refused_click and not by_keyboard:
                p.page.keyboard.press("ArrowRight")
                p.page.keyboard.press("Enter")
                by_keyboard = True
            else:
                p.page.locator(".t-choices button, .t-hand button.legal").first.click()
            turns += 1
        assert refused_click and by_keyboard and turns >= 8
        end = p.page.locator("#t-end")
        end.wait_for()
        assert p.page.inner_text("#t-verdict").startswith("valid: complete, 4 deals")
        assert "you finished" in p.page.inner_text("#t-place")
        assert p.page.locator(".t-scores tr").count() == 6  # heading, 4 deals, total
        p.shoot("phone-390-end")
        assert p.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        p.page.click("#t-replay")
        p.page.wait_for_selector("#verdict")
        p.page.wait_for_function("() => document.getElementById('verdict').textContent.length > 0")
        origin = "/".join(table.origin) + "/"
        assert p.errors == [] and [u for u in p.requests if not u.startswith(origin)] == []
    finally:
        p.page.close()
    assert verify(table.log)["complete"]


def test_a_closed_tab_forfeits_the_seat(start_table, browser):
    table = start_table("--linger", "0", "--abandon", "3")  # a person's time control: 60 s a decision
    p = Page(browser, table.url, {"width": 1200, "height": 900})
    assert p.wait_turn("") != ""
    assert "closing this page for 3 s" in p.page.inner_text("#t-rules")
    p.shoot("desktop-first-decision")
    p.page.close()  # the person leaves; nobody asks for the table any more
    result = table.result()
    assert result["status"] == "complete" and result["forfeits"] == [0]
    faults = [json.loads(line) for line in table.log.read_text().splitlines() if '"type":"fault"' in line]
    mine = [f for f in faults if f["seat"] == 0]
    assert len(mine) == 1 and mine[0]["kind"] in ("crash", "disconnect"), mine  # left at once, not timed out
    assert verify(table.log)["complete"]
