"""The HTML viewer in a real headless Chromium (driven by playwright, browser from Debian).

Set up with ``scripts/setup_browser.sh``. Without Chromium or playwright these tests FAIL, with
a message saying so: they are part of the suite, not optional.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbiter.replay.model import load_replay
from arbiter.web import write_html

from ..conftest import OpenedPage
from .conftest import ARTIFACTS, log_lines, log_objects


@pytest.fixture(scope="module")
def fixed_page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "fixed.html"
    write_html(load_replay(log_lines()), out)
    return out


class Opened(OpenedPage):
    """The viewer, opened and ready to step."""

    def __init__(self, browser, path: Path):
        super().__init__(browser, path, "() => window.barbuReplay && document.body.dataset.step !== undefined")

    def step(self) -> int:
        return int(self.page.evaluate("document.body.dataset.step"))

    def trick(self) -> list[tuple[str, int, bool]]:
        return [
            tuple(x)
            for x in self.page.eval_on_selector_all(
                "#trick .card", "els => els.map(e => [e.dataset.card, +e.dataset.seat, e.classList.contains('winner')])"
            )
        ]

    def press(self, key: str, times: int = 1) -> None:
        for _ in range(times):
            self.page.keyboard.press(key)


@pytest.fixture
def opened(browser, fixed_page):
    o = Opened(browser, fixed_page)
    yield o
    o.close()


def test_loads_from_file_with_no_network_and_no_errors(opened):
    page = opened.page
    assert page.title() == "Barbu replay — selfplay-1"
    opened.press("ArrowRight", 30)
    opened.press("ArrowDown", 3)
    page.select_option("#seat-select", "1")
    page.click("#next")
    page.click("#prev-deal")
    assert opened.requests == [opened.url], "the page made requests of its own"
    assert opened.errors == []
    assert page.inner_text("#verdict") == "✓ valid · complete · 8 deals"
    assert "valid: complete, 8 deals" in page.get_attribute("#verdict", "title")


def _expected_tricks(deal: int) -> list[tuple[str, list[tuple[str, int, bool]]]]:
    """Per decision line of the deal, in order: its type and the trick the table then shows."""
    objs = log_objects()
    out = []
    current: list[tuple[str, int]] = []
    for i, o in enumerate(objs):
        if o.get("deal") != deal or o["type"] not in ("declare", "double", "play"):
            continue
        if o["type"] != "play":
            out.append((o["type"], []))
            continue
        if len(current) == 4:
            current = []
        current.append((o["card"], o["seat"]))
        nxt = objs[i + 1]
        winner = nxt["winner"] if nxt["type"] == "trick" else None
        if winner is not None:
            assert [c for c, _ in current] == nxt["cards"]
        out.append(("play", [(c, s, s == winner) for c, s in current]))
    return out


def test_stepping_shows_each_trick_as_the_log_says(opened):
    page = opened.page
    page.select_option("#deal-select", "1")
    page.evaluate("document.activeElement.blur()")
    start = opened.step()
    assert page.inner_text("#contract") == "No Queens"
    expected = _expected_tricks(1)
    assert sum(1 for kind, _ in expected if kind == "play") == 48
    seen = []
    for n, (kind, trick) in enumerate(expected, start=1):
        opened.press("ArrowRight")
        assert opened.step() == start + n
        shown = opened.trick()
        assert sorted(shown) == sorted(trick), f"forward, decision {n} ({kind})"
        seen.append(shown)
    # the winners are highlighted exactly on the completing plays
    assert sum(1 for t in seen if any(w for _, _, w in t)) == 12
    # and back again, all the way to the deal line
    for n in range(len(expected) - 1, 0, -1):
        opened.press("ArrowLeft")
        assert sorted(opened.trick()) == sorted(expected[n - 1][1]), f"backward, decision {n}"
    opened.press("ArrowLeft")
    assert opened.step() == start and opened.trick() == []


def test_faults_and_think_times_are_shown(opened):
    page = opened.page
    steps = page.evaluate("barbuReplay.data.steps.map(s => s.l)")
    page.evaluate(f"barbuReplay.go({steps.index(81)})")  # the substituted play after the timeout fault
    event = page.inner_text("#event")
    assert "fault S0 timeout" in event and "substituted" in event and "line 80" in event
    assert page.locator("#auto").count() == 1
    page.evaluate(f"barbuReplay.go({steps.index(82)})")
    assert page.locator("#event .fault").count() == 0
    assert page.inner_text("#ms").endswith(" ms")
    assert page.locator("#faults li").count() == 2
    assert page.locator("#ticks i:not(.deal)").count() == 2


def test_seat_selector_hides_the_other_hands(opened):
    page = opened.page
    page.evaluate("barbuReplay.go(100)")
    everyone = {s: page.locator(f"#hand-{s} .card[data-card]:not(.gone)").count() for s in range(4)}
    assert all(everyone.values())
    page.select_option("#seat-select", "2")
    for s in range(4):
        real = page.locator(f"#hand-{s} .card[data-card]:not(.gone)").count()
        backs = page.locator(f"#hand-{s} .card.back:not(.gone)").count()
        count = int(page.get_attribute(f"#hand-{s}", "data-count"))
        if s == 2:
            assert real == count == everyone[2] and backs == 0
        else:
            assert real == 0 and backs == count == everyone[s]
            assert f"{count} card" in page.inner_text(f"#hand-{s} .hand-foot")
    # seat 2 sits at the bottom; the trick and the doubles stay public
    assert page.locator("#slot-bottom #hand-2").count() == 1
    # a deal line's raw text holds every hand: not shown in a seat's view
    page.evaluate("barbuReplay.go(barbuReplay.data.deals[1].first)")
    assert "hidden" in page.text_content("#raw-line")
    assert page.locator("#hand-0 .card[data-card]:not(.gone)").count() == 0
    opened.press("a")
    assert page.locator("#hand-0 .card[data-card]:not(.gone)").count() == 13
    assert '"type":"deal"' in page.text_content("#raw-line")


def test_domino_layout_grows_with_the_plays(opened):
    page = opened.page
    objs = log_objects()
    plays = [(i + 1, o) for i, o in enumerate(objs) if o["type"] == "play" and o["deal"] == 0]
    steps = page.evaluate("barbuReplay.data.steps.map(s => s.l)")
    on_table = 0
    for number, o in plays[:20]:
        page.evaluate(f"barbuReplay.go({steps.index(number)})")
        if o["card"] is not None:
            on_table += 1
            assert page.locator(f"#layout .card[data-card='{o['card']}']").count() == 1
        assert page.locator("#layout .card").count() == on_table
    assert "Domino from J" in page.inner_text("#layout .title")


def test_screenshot_of_a_mid_deal_position(opened):
    """Written to test-artifacts/replay-mid-deal.png: a completed trick, its winner highlighted."""
    page = opened.page
    steps = page.evaluate("barbuReplay.data.steps.map(s => s.l)")
    objs = log_objects()
    # deal 1 (No Queens), the play completing its 5th trick
    trick_line = next(i + 1 for i, o in enumerate(objs) if o["type"] == "trick" and o["deal"] == 1 and o["index"] == 4)
    page.evaluate(f"barbuReplay.go({steps.index(trick_line - 1)})")
    winner = page.locator("#trick .card.winner")
    assert winner.count() == 1
    assert int(winner.get_attribute("data-seat")) == objs[trick_line - 1]["winner"]
    assert winner.is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "replay-mid-deal.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    # and one seat's view of the Domino deal, for the eye
    page.select_option("#seat-select", "0")
    page.evaluate("barbuReplay.go(barbuReplay.data.deals[2].first + 40)")
    page.screenshot(path=str(ARTIFACTS / "replay-domino-seat0.png"), full_page=True)


def test_a_bad_log_shows_where_it_goes_wrong(browser, tmp_path):
    from .conftest import with_bad_line

    lines, bad = with_bad_line(log_lines(), deal=1, nth_play=7, card="AS")
    out = tmp_path / "bad.html"
    write_html(load_replay(lines), out)
    o = Opened(browser, out)
    try:
        page = o.page
        assert page.inner_text("#verdict") == f"✗ invalid at line {bad}"
        o.press("End")
        assert f"line {bad}" in page.inner_text("#event")
        assert len(o.trick()) == 2
        assert '"card":"AS"' in page.text_content("#raw-line")
        assert o.errors == []
    finally:
        o.close()


def test_a_full_match_steps_through_by_key_and_by_jump(browser, full_log, tmp_path):
    """Every step of a full match draws without an error, by key and by the slider's far jumps.
    How fast is measured by bench/replay_page.py, not here."""
    out = tmp_path / "full.html"
    steps = write_html(load_replay(full_log.read_text(encoding="utf-8").splitlines(keepends=True)), out)
    assert steps > 1500
    o = Opened(browser, out)
    try:
        page = o.page
        o.press("ArrowRight", 200)
        page.wait_for_function("() => document.body.dataset.step === '200'")
        page.evaluate("barbuReplay.go(barbuReplay.count - 1)")
        assert o.step() == steps - 1
        assert "selfplay-3" in page.title()
        o.press("Home")
        assert o.step() == 0
        # every step of the match drawn in turn, then once past the end (which stays at the end)
        last = page.evaluate(
            "() => { for (let i = 0; i < barbuReplay.count; i++) barbuReplay.step(1); return barbuReplay.cur; }"
        )
        assert last == steps - 1 and o.step() == steps - 1
        assert o.errors == [] and o.requests == [o.url]
        assert json.loads(page.evaluate("JSON.stringify(barbuReplay.data.series.length)")) == 29
    finally:
        o.close()
