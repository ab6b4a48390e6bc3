"""The HTML page without a browser: self-contained, and its snapshots agree with the log."""

from __future__ import annotations

import json
import re

from barbu.rules import card_name

from arbiter.replay.model import load_replay
from arbiter.web import build_data, render_html

from .conftest import log_lines, log_objects, with_bad_line


def _embedded(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert m, "no embedded data"
    return json.loads(m.group(1))


def test_page_is_one_self_contained_file():
    page, steps = render_html(load_replay(log_lines()))
    assert steps > 400
    lowered = page.lower()
    needles = ("http:", "https:", "//cdn", "src=", "href=", "@import", "url(", "@font-face", "fetch(", "xmlhttprequest")
    for needle in needles:
        assert needle not in lowered, needle
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count("<script") == 2 and page.count("<style") == 1
    data = _embedded(page)
    assert data["log"] == [line.rstrip("\n") for line in log_lines()]
    assert len(data["steps"]) == steps


def test_steps_are_deals_decisions_and_ends():
    objs = log_objects()
    data = build_data(load_replay(log_lines()))
    stepped = [(i + 1, o["type"]) for i, o in enumerate(objs) if o["type"] not in ("match", "trick", "fault")]
    assert [(s["l"], s["k"]) for s in data["steps"]] == stepped
    assert [d["n"] for d in data["deals"]] == list(range(8))
    assert data["series"][-1] == [362, -286, 19, 69] and len(data["series"]) == 9
    assert data["verdict"]["valid"] and data["verdict"]["complete"]


def test_snapshots_follow_the_log():
    """Each play step shows the trick so far; the completing play shows the trick line's winner."""
    objs = log_objects()
    steps = {s["l"]: s for s in build_data(load_replay(log_lines()))["steps"]}
    current: list[str] = []
    played = 0
    for number, o in enumerate(objs, start=1):
        if o["type"] == "deal":
            current, played = [], 0
            assert sum(len(h) for h in steps[number]["h"]) == 52
        if o["type"] == "play":
            if o["card"] is not None:
                played += 1
            st = steps[number]
            assert sum(len(h) for h in st["h"]) == 52 - played
            if st["lay"] is not None:
                assert sum(len(row) for row in st["lay"]) == played
                continue
            current.append(o["card"])
            tr = st["tr"]
            assert [card_name(c) for c in tr["c"]] == current
            if len(current) == 4:
                trick = objs[number]  # the trick line follows the completing play
                assert trick["type"] == "trick"
                assert tr["w"] == trick["winner"] and tr["ld"] == trick["leader"] and tr["i"] == trick["index"]
                current = []
            else:
                assert tr["w"] == -1
        if o["type"] == "deal_end":
            assert steps[number]["end"]["tot"] == o["totals"] == steps[number]["tot"]


def test_faults_and_think_times_ride_on_their_step():
    data = build_data(load_replay(log_lines()))
    by_line = {s["l"]: s for s in data["steps"]}
    assert [f["line"] for f in by_line[81]["f"]] == [80]
    assert by_line[81]["a"] == 1 and "ms" not in by_line[81]
    assert [f["kind"] for f in data["faults"]] == ["timeout", "illegal"]
    assert data["steps"][data["faults"][1]["step"]]["l"] == 158
    timed = [s for s in data["steps"] if "ms" in s]
    assert len(timed) > 200 and all(isinstance(s["ms"], float) for s in timed)


def test_a_bad_line_ends_with_a_stop_step():
    lines, bad = with_bad_line(log_lines(), deal=1, nth_play=7, card="AS")
    data = build_data(load_replay(lines))
    last = data["steps"][-1]
    assert last["k"] == "stop" and last["l"] == bad
    assert f"line {bad}" in last["t"]
    assert data["verdict"] == {
        "valid": False, "complete": False, "text": f"invalid: line {bad}: AS is not in your hand", "line": bad,
        "error": "AS is not in your hand",
    }  # fmt: skip
    assert [card_name(c) for c in last["tr"]["c"]] == ["7D", "QD"]  # trick 2 as far as it went, S3 leading


def test_start_position_and_seat():
    data = build_data(load_replay(log_lines()), deal=3, seat=2)
    assert data["start"] == {"step": data["deals"][3]["first"], "seat": 2}
    assert data["steps"][data["start"]["step"]]["k"] == "deal"


def test_hostile_names_cannot_break_out_of_the_page():
    lines = log_lines()
    header = json.loads(lines[0])
    header["seats"][1]["entrant"] = "</script><script>alert(1)</script><!--"
    header["match_id"] = "<b>x</b>"
    lines[0] = json.dumps(header) + "\n"
    page, _ = render_html(load_replay(lines))
    assert "</script><script>alert(1)" not in page
    assert "<b>x</b>" not in page
    assert _embedded(page)["match"]["seats"][1] == "</script><script>alert(1)</script><!--"


def test_full_match_page_is_small(full_log):
    """A full match stays a page one can mail; building time is measured by bench/replay_page.py."""
    lines = full_log.read_text(encoding="utf-8").splitlines(keepends=True)
    page, steps = render_html(load_replay(lines))
    assert len(lines) > 1800 and steps > 1500
    assert len(page.encode()) < 2_500_000
