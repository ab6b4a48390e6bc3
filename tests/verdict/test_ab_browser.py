"""The A/B test's page (``arbiter ab --html``) in a real headless Chromium, as
tests/report/test_browser.py runs the report: it loads from file:// with no request of its own
and no console error, draws the LLR path between its bounds, the CI band narrowing, one bar per
contract, and embeds the same data as ``--json``. Writes test-artifacts/ab.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbiter.verdict.ab import run_ab
from arbiter.verdict.sprt import Verdict
from arbiter.web.ab import render_ab_page, write_ab_page

from ..conftest import OpenedPage
from ..tournament import inproc
from .test_ab import play, spec, sprt

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """A decided test: the heuristic bot (B) against the random player (A), first-legal players
    as the field (fast); no verdict before 6 sets."""
    folder = tmp_path_factory.mktemp("ab")
    return run_ab(spec(folder, "random:1", "heuristic", sprt(24, 30.0, 6)), executor=inproc.in_process(play))


@pytest.fixture(scope="module")
def page_file(result, tmp_path_factory) -> Path:
    return write_ab_page(tmp_path_factory.mktemp("page") / "ab.html", result.to_json(with_history=True))


def points(attr: str) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in attr.split()]  # type: ignore[misc]


def test_the_page_in_a_browser(browser, result, page_file):
    data = result.to_json(with_history=True)
    assert result.verdict is Verdict.H1  # (so the page shows a crossing)
    o = OpenedPage(browser, page_file, "() => window.barbuAb !== undefined")
    page, url, requests, errors = o.page, o.url, o.requests, o.errors
    try:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ab.png"), full_page=True)
        assert page.title() == "Barbu A/B test — t"
        assert page.evaluate("barbuAb") == json.loads(json.dumps(data))  # the --json data, embedded
        assert page.locator("#state").inner_text() == "B is better"

        # the LLR path: one point per set (from 0), ending beyond the H1 bound, drawn between the bounds
        path = page.locator("#llr-chart polyline.path")
        assert path.is_visible()
        xy = points(path.get_attribute("points"))
        assert len(xy) == data["sets"] + 1 and xy == sorted(xy, key=lambda p: p[0])
        upper = float(page.locator("#llr-chart line.rule.upper").get_attribute("y1"))
        lower = float(page.locator("#llr-chart line.rule.lower").get_attribute("y1"))
        assert lower > upper  # SVG y grows downwards: H0's bound is below H1's
        assert xy[-1][1] <= upper and all(y < lower for _, y in xy)  # beyond H1's bound at the end, never at H0's
        assert page.locator("#llr-chart .decidedlab").text_content() == f"verdict · set {data['decided_at']}"
        box = path.bounding_box()
        assert box and box["width"] > 300

        # the CI band narrows: the interval at the end is narrower than at 4 sets
        band = points(page.locator("#ci-chart polygon.band").get_attribute("points"))
        half = len(band) // 2
        top, bottom = band[:half], list(reversed(band[half:]))
        widths = [b[1] - t[1] for t, b in zip(top, bottom, strict=True)]
        assert len(widths) == data["sets"] - 1 and widths[-1] < widths[0]
        assert page.locator("#ci-chart line.rule.delta1").count() == 1

        # one bar per contract, in the same order as the table, summing to the mean
        bars = page.locator("#contract-chart g.contract")
        assert bars.count() == len(data["contracts"]) == 3
        names = bars.evaluate_all("els => els.map(e => e.dataset.contract)")
        assert names == page.locator("#contract-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.contract)")
        assert abs(sum(data["contracts"].values()) - data["mean"]) < 1e-6
        assert page.locator("ol.sets li").count() == data["sets_played"]
        assert requests == [url], "the page made requests of its own"
        assert errors == []
    finally:
        o.close()


def test_the_page_escapes_what_it_is_given(result):
    data = result.to_json(with_history=True)
    data["entrants"]["A"] = "<script>alert(1)</script>"
    data["name"] = "<b>x</b>"
    html = render_ab_page(data)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>x</b>" not in html.split('<script id="ab-data"')[0]


def test_the_page_shows_what_ran_where(browser, result, tmp_path):
    """An entrant as written (``python sample_bots/heuristic_bot.py``) names a path relative to a
    folder the reader may not be in: with ``launched`` in the data, the page shows the command
    that ran and its folder; without it, the command as written alone."""
    data = result.to_json(with_history=True)
    assert "launched" not in data or all(set(v) == {"command", "cwd"} for v in data["launched"].values())
    data["entrants"]["B"] = "python sample_bots/heuristic_bot.py"
    data["launched"] = {"B": {"command": "/usr/bin/python3 sample_bots/heuristic_bot.py", "cwd": "/srv/barbu <&>"}}
    o = OpenedPage(browser, write_ab_page(tmp_path / "ab.html", data), "() => window.barbuAb !== undefined")
    try:
        about = o.page.locator("#about dl").inner_text()
        assert (
            "python sample_bots/heuristic_bot.py\nran as /usr/bin/python3 sample_bots/heuristic_bot.py in /srv/barbu <&>"
            in about
        )
        assert about.count("ran as") == 1  # A: nothing launched in the data, nothing invented
        assert o.errors == []
    finally:
        o.close()
