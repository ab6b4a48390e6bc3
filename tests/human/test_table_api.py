"""The table's JSON API against a real `arbiter play` (real bot processes, the real match host and
web server): a match played through it to its end with a log that verifies; a choice that is not
legal, or not asked for any more, refused by the server; the page refused without its secret path;
a seat left idle (its page open, never answering) forfeits after its time control."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from .conftest import verify


def test_a_match_played_through_the_api_ends_and_its_log_verifies(start_table):
    table = start_table("--linger", "0")
    s = table.next_request()
    assert s["names"][0] == "human" and s["seat"] == 0
    assert s["time_control"] == {"per_decision": 60.0, "reserve": 600.0}
    kinds: set[str] = set()
    refused = False
    while s["status"] != "over":
        request = s["request"]
        keys = [c["key"] for c in request["choices"]]
        if request["kind"] == "play" and not refused:
            held = {f"c{c['id']}" for c in s["view"]["hand"]}
            illegal = sorted(held - set(keys)) or ["c99"]
            code, body = table.choose(request["id"], illegal[0])
            assert code == 422 and "not a legal choice" in body["error"]
            code, body = table.choose(request["id"] - 1, keys[0])  # an earlier request
            assert code == 409 and "no longer" in body["error"]
            assert table.choose(request["id"], keys[0], content_type="text/plain")[0] == 415
            refused = True
        kinds = kinds | {request["kind"]}
        assert table.choose(request["id"], keys[-1]) == (200, {"ok": True})
        s = table.next_request(s["version"])
    assert refused and {"double", "play"} <= kinds  # (one contract: the declaration is automatic)
    ended = s["ended"]
    assert ended["status"] == "complete" and ended["faults"] == [] and ended["verdict"].startswith("valid: complete")
    assert len(s["view"]["results"]) == 4
    result = table.result()
    assert result["status"] == "complete" and result["totals"] == ended["totals"]
    checked = verify(table.log)
    assert checked["complete"] and checked["totals"] == ended["totals"]
    header = json.loads(table.log.read_text().splitlines()[0])
    assert header["seats"][0] == {"seat": 0, "entrant": "human"}


def test_the_table_needs_its_secret_path(start_table):
    table = start_table("--linger", "0")
    origin = "/".join(table.origin)
    for path in ("/", "/api/state", "/nope/api/state"):
        try:
            urllib.request.urlopen(origin + path, timeout=10)
            raise AssertionError(f"{path} answered")
        except urllib.error.HTTPError as e:
            assert e.code == 404
    page = urllib.request.urlopen(table.url, timeout=10).read().decode()
    assert (
        "<h1>Barbu table</h1>" in page
        and "connect-src 'self'" in page
        and "script-src 'self'" in page
        and "http" not in page.split("<body")[1]
    )


def test_mistakes_are_one_error_line():
    import subprocess

    from .conftest import ARBITER, RANDOM_BOT

    for args, words in (
        (["--bot", RANDOM_BOT], "exactly 3 --bot options, got 1"),
        (["--bot", RANDOM_BOT] * 3 + ["--reserve", "-1"], "reserve"),
        (["--bot", RANDOM_BOT] * 3 + ["--listen", "nowhere"], "web: 'nowhere' is not HOST:PORT"),
    ):
        run = subprocess.run(
            [ARBITER, "play", *args, "--isolation", "none"], capture_output=True, text=True, timeout=60
        )
        assert run.returncode != 0 and run.stderr.startswith("error: ") and words in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_seat_left_idle_forfeits_after_its_time_control(start_table):
    table = start_table("--linger", "5", "--time-per-decision", "0.5", "--reserve", "0", "--max-strikes", "2")
    s = table.next_request()
    assert s["request"] is not None  # asked, and never answered (this test keeps asking: the page is open)
    while s["status"] != "over":
        s = table.state(s["version"])
    assert s["ended"]["forfeits"] == [0] and s["request"] is None
    assert [f["kind"] for f in s["ended"]["faults"] if f["seat"] == 0] == ["timeout", "timeout"]
    assert any("forfeit" in n for n in s["notes"]), s["notes"]
    result = table.result()
    assert result["status"] == "complete" and result["forfeits"] == [0]
    assert verify(table.log)["complete"]
