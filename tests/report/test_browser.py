"""The report in a real headless Chromium (playwright), as tests/replay/test_browser.py runs it:
it loads from file:// with no network request and no console error, draws one rating line per
entrant, and its match links open the replay pages. Writes test-artifacts/report.png.
"""

from __future__ import annotations

import pytest

from ..conftest import OpenedPage
from .conftest import ARTIFACTS


@pytest.fixture
def opened(browser, report):
    """The report opened from its file:// URL, with every request and console message recorded."""
    o = OpenedPage(browser, report.out, "() => window.barbuReport !== undefined")
    yield o.page, o.url, o.requests, o.errors
    o.close()


def test_the_report_in_a_browser(opened, report):
    page, url, requests, errors = opened
    data = report.data
    assert page.title() == "Barbu tournament report — mini"

    # for the eye, as it first shows
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    # one line per entrant in the rating chart, visible, in the entrant's colour
    lines = page.locator("#rating-chart polyline.mu")
    assert lines.count() == len(data["entrants"]) == 5
    assert sorted(lines.evaluate_all("els => els.map(e => e.dataset.entrant)")) == sorted(data["entrants"])
    for name in data["entrants"]:
        line = page.locator(f"#rating-chart polyline.mu[data-entrant='{name}']")
        assert line.is_visible() and line.get_attribute("stroke") == data["colours"][name]
        box = line.bounding_box()
        assert box["width"] > 200  # spans the chart
    # the standings in the page's order
    names = page.locator("#standings tbody tr").evaluate_all("rows => rows.map(r => r.dataset.entrant)")
    assert names == [s["name"] for s in data["standings"]]
    # hovering a legend entry picks out that entrant's line
    page.hover("#chart .legend .key[data-entrant='dave']")
    assert page.locator("#rating-chart.focusing polyline.mu.on[data-entrant='dave']").count() == 1
    page.mouse.move(0, 0)
    assert page.locator("#rating-chart.focusing").count() == 0
    # the contract table's two views
    assert page.locator("#contracts-all").is_visible() and not page.locator("#contracts-declarer").is_visible()
    page.click("#contracts .tabs button[data-view='declarer']")
    assert page.locator("#contracts-declarer").is_visible() and not page.locator("#contracts-all").is_visible()
    page.click("#contracts .tabs button[data-view='all']")
    # the match filter
    page.fill("#filter", "dave")
    with_dave = sum(1 for m in data["matches"] if "dave" in m["seats"])
    assert page.locator("#match-table tbody tr:visible").count() == with_dave == 16
    assert page.inner_text("#shown") == "16 of 20 matches"
    page.fill("#filter", "")
    assert page.locator("#match-table tbody tr:visible").count() == 20
    assert requests == [url], "the report made requests of its own"
    assert errors == []

    # a match link opens that match's replay page
    link = page.locator("#match-table a.replay").nth(2)
    key = data["matches"][2]["key"]
    link.click()
    page.wait_for_function("() => window.barbuReplay && document.body.dataset.step !== undefined")
    assert page.title() == f"Barbu replay — mini/{key}"
    replay_url = page.url
    assert replay_url == (report.out.parent / "mini_replays" / f"{key}.html").resolve().as_uri()
    seats = data["matches"][2]["seats"]
    assert page.evaluate("barbuReplay.data.match.seats") == seats
    # one colour per entrant: each seat of the replay in its entrant's colour on the report
    strokes = page.locator("#chart svg polyline").evaluate_all("els => els.map(e => e.getAttribute('stroke'))")
    assert strokes == [data["colours"][name] for name in seats]
    names = page.locator("#chart .legend span").evaluate_all("els => els.map(e => getComputedStyle(e).color)")
    report_dots = [
        page.evaluate(
            f"() => {{ const d = document.createElement('b'); d.style.color = '{data['colours'][n]}'; document.body.append(d); const c = getComputedStyle(d).color; d.remove(); return c; }}"
        )
        for n in seats
    ]
    assert names == report_dots
    page.go_back()
    page.wait_for_function("() => window.barbuReport !== undefined")
    assert requests == [url, replay_url, url]
    assert errors == []


def test_wide_tables_are_not_cut_off(browser, tmp_path):
    """All eight contracts and long entrant names: at 1400 px the per-contract table (both views)
    and the doubling table show every column, with nothing scrolled out of sight."""
    from .conftest import play_league, write_report

    names = ["heuristic-bot-version-two", "random-player-number-one", "first-legal-player", "another-random-one"]
    contracts = "no_tricks, no_hearts, no_queens, barbu, no_last_two, trumps, domino, salad"
    league = play_league(tmp_path / "wide", dict(zip(names, ["random", "first", "first", "random"], strict=True)),
                         name="wide", contracts=contracts)  # fmt: skip
    w = write_report(league, tmp_path / "wide.html", "--no-replays")
    o = OpenedPage(browser, w.out, "() => window.barbuReport !== undefined")
    try:
        for panel, view in (("#contracts", "all"), ("#contracts", "declarer"), ("#doubling", "")):
            if view:
                o.page.click(f"#contracts .tabs button[data-view='{view}']")
            cut = o.page.evaluate(
                f"() => {{ const p = document.querySelector('{panel}'); return p.scrollWidth - p.clientWidth; }}"
            )
            assert cut <= 0, f"{panel} {view}: {cut} px of its table cut off at 1400 px"
        # at a 1280 px laptop's width too, no panel cuts its table (the standings' faults, say);
        # screenshots at 1280 and at a phone's 390
        for width, height in ((1280, 800), (390, 844)):
            o.page.set_viewport_size({"width": width, "height": height})
            if width == 1280:
                cut = o.page.evaluate(
                    "() => Array.from(document.querySelectorAll('.panel')).filter(p => !p.hidden && p.offsetParent)"
                    ".map(p => [p.id, p.scrollWidth - p.clientWidth]).filter(([, c]) => c > 0)"
                )
                assert cut == [], f"cut off at 1280 px: {cut}"
            ARTIFACTS.mkdir(exist_ok=True)
            o.page.screenshot(path=str(ARTIFACTS / f"report-{width}.png"), full_page=True)
        assert o.errors == []
    finally:
        o.close()
