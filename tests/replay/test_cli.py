"""``arbiter replay``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from arbiter.cli import app

from .conftest import FIXED_LOG, log_lines, with_bad_line

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["replay", *args], catch_exceptions=False, env={"COLUMNS": "100", "NO_COLOR": "1"})


@pytest.fixture
def bad_log(tmp_path):
    lines, bad = with_bad_line(log_lines(), deal=1, nth_play=7, card="AS")
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path, bad


def test_verify_valid():
    r = run(str(FIXED_LOG), "--verify")
    assert r.exit_code == 0
    assert r.stdout == "valid: complete, 8 deals, totals [362, -286, 19, 69], places [1, 4, 3, 2]\n"


def test_verify_json_valid():
    r = run(str(FIXED_LOG), "--verify", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {
        "valid": True, "complete": True, "deals": 8, "totals": [362, -286, 19, 69], "places": [1, 4, 3, 2],
    }  # fmt: skip
    assert json.loads(run(str(FIXED_LOG), "--json").stdout) == json.loads(r.stdout)


def test_verify_invalid(bad_log):
    path, bad = bad_log
    r = run(str(path), "--verify")
    assert r.exit_code == 1
    assert r.stdout == f"invalid: line {bad}: AS is not in your hand\n"
    r = run(str(path), "--json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"valid": False, "line": bad, "error": "AS is not in your hand"}


def test_cut_short_log_is_valid_but_incomplete(tmp_path):
    path = tmp_path / "cut.jsonl"
    lines = log_lines()
    path.write_text("".join(lines[:50]) + lines[50][:10], encoding="utf-8")
    r = run(str(path), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["complete"] is False
    r = run(str(path), "--verify")
    assert r.stdout.startswith("valid: incomplete (cut short), 0 deals")
    r = run(str(path))
    assert r.exit_code == 0
    assert "✓ valid: incomplete (cut short after line 50)" in r.stdout


@pytest.mark.parametrize("args", [(), ("--verify",), ("--json",), ("--html", "x.html")])
def test_unreadable_log_exits_2(tmp_path, args):
    r = run(str(tmp_path / "missing.jsonl"), *[str(tmp_path / a) if a.endswith(".html") else a for a in args])
    assert r.exit_code == 2
    assert "no such match log" in r.stderr
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    r = run(str(binary), *args)
    assert r.exit_code == 2 and "not a UTF-8 text file" in r.stderr


@pytest.mark.parametrize("args", [(), ("--verify",), ("--json",)])
def test_a_file_that_is_no_log_exits_2(tmp_path, args):
    """A binary file that is valid UTF-8 (``/proc/self/environ``: NUL-separated text) is no match
    log: exit 2 with one line, not "the log is empty" (exit 1)."""
    r = run("/proc/self/environ", *args)
    assert r.exit_code == 2 and "NUL byte" in r.stderr and "not a match log" in r.stderr, r.stderr
    assert r.stdout == ""
    nul = tmp_path / "nul.jsonl"
    nul.write_text('{"type":"match"}\n\0\0\n')
    r = run(str(nul), *args)
    assert r.exit_code == 2 and f"{nul}:2: a NUL byte" in r.stderr


def test_render_default():
    r = run(str(FIXED_LOG))
    assert r.exit_code == 0
    assert "Deal 7 · declarer S3 random-3" in r.stdout
    assert r.stdout.rstrip().endswith("✓ valid: complete, 8 deals, totals [362, -286, 19, 69], places [1, 4, 3, 2]")
    assert "\x1b[" not in r.stdout


def test_render_deal_and_seat():
    r = run(str(FIXED_LOG), "--deal", "3", "--seat", "1")
    assert r.exit_code == 0
    assert "Deal 3 · declarer S1 random-1 · No Queens" in r.stdout
    assert "Deal 2 ·" not in r.stdout and "Deal 4 ·" not in r.stdout
    assert "as seen by S1 (random-1)" in r.stdout


def test_seat_by_entrant_name():
    """``--seat random-1`` is ``--seat 1``; a name not in the log is one clear error."""
    by_name = run(str(FIXED_LOG), "--deal", "3", "--seat", "random-1")
    assert by_name.exit_code == 0 and by_name.stdout == run(str(FIXED_LOG), "--deal", "3", "--seat", "1").stdout
    r = run(str(FIXED_LOG), "--seat", "mybot")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == (
        "error: --seat mybot: no seat 0-3 and no entrant of this log has that name "
        "(seats: 0 random-0, 1 random-1, 2 random-2, 3 random-3)\n"
    )


def test_an_entrant_with_two_seats_needs_a_seat_number(tmp_path):
    log = tmp_path / "dup.jsonl"
    log.write_text(FIXED_LOG.read_text(encoding="utf-8").replace('"random-2"', '"random-0"', 1), encoding="utf-8")
    r = run(str(log), "--seat", "random-0")
    assert r.exit_code == 2 and "that entrant holds seats 0, 2; give one seat number" in r.stderr


@pytest.mark.parametrize("how", ["80 columns", "a pipe"])
@pytest.mark.parametrize("seat", [None, "1"])
def test_narrow_output_keeps_every_value(tmp_path, how, seat):
    """At 80 columns (or piped, which rich renders at 80) no value is cut: no "…", the held
    hands whole (a hand may go on two lines), every Domino place, the "won by" header whole."""
    import subprocess
    import sys

    from arbiter.cli.replay import hand_text
    from arbiter.replay.model import load_replay

    args = [str(FIXED_LOG), *(["--seat", seat] if seat else [])]
    if how == "80 columns":
        out = runner.invoke(app, ["replay", *args], env={"COLUMNS": "80", "NO_COLOR": "1"}).stdout
    else:
        cmd = [sys.executable, "-c", "from arbiter.cli import main; main()", "replay", *args]
        env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120).stdout
    lines = out.splitlines()
    assert "…" not in out and max(len(line.rstrip()) for line in lines) <= 80
    assert " won by " in out
    replay = load_replay(log_lines())
    text = "\n".join(line.rstrip() for line in lines)
    for e in replay.decisions():
        if seat is not None and e.kind == "play" and e.actor == int(seat):
            for part in str(hand_text(e.view(int(seat)).hand)).split("  "):  # each suit whole
                assert part in text, part
    for place in ("1st", "2nd", "3rd"):
        assert text.count(f"♥ {place}") + text.count(f"♦ {place}") + text.count(f"♣ {place}") + text.count(
            f"♠ {place}"
        ) == sum(1 for r in replay.deals() if r.declaration and r.declaration.contract.value == "domino")


def test_think_times_have_their_unit():
    """No "610.815" (a thousands separator?): every think time carries its unit."""
    from arbiter.cli.replay import duration_text

    assert [duration_text(ms) for ms in (610.815, 2.461, 0.096, 1234.5, 0.0)] == [
        "610.8 ms", "2.5 ms", "96 µs", "1.23 s", "0 µs",
    ]  # fmt: skip
    out = run(str(FIXED_LOG)).stdout
    assert "think total  think max" in out and "2.5 ms" in out


def test_render_invalid_shows_up_to_the_bad_line(bad_log):
    path, bad = bad_log
    r = run(str(path))
    assert r.exit_code == 1
    assert "Deal 0 ·" in r.stdout and "Deal 1 ·" in r.stdout and "Deal 2 ·" not in r.stdout
    assert f"✗ invalid: line {bad}: AS is not in your hand" in r.stdout


def test_bad_options():
    assert run(str(FIXED_LOG), "--deal", "8").exit_code == 2
    assert "no deal 8 in this log (deals 0–7)" in run(str(FIXED_LOG), "--deal", "8").stderr
    assert run(str(FIXED_LOG), "--seat", "4").exit_code == 2


def test_html(tmp_path, bad_log):
    out = tmp_path / "sub" / "match.html"
    r = run(str(FIXED_LOG), "--html", str(out), "--deal", "2", "--seat", "3")
    assert r.exit_code == 0, r.stdout
    assert r.stdout.startswith(f"wrote {out}: 8 deals, ")
    assert out.exists() and not out.with_name("match.html.part").exists()
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    path, bad = bad_log
    r = run(str(path), "--html", str(tmp_path / "bad.html"))
    assert r.exit_code == 1 and "invalid: line" in r.stdout
    assert (tmp_path / "bad.html").exists()


def test_an_arena_log_takes_name_at_version_and_a_bare_name_when_one_version_plays(tmp_path):
    """An arena's logs name seats ``lowbot@2``: ``--seat lowbot@2`` and ``--seat lowbot`` are that
    seat; a bare name two versions share is one clear error naming them."""
    text = FIXED_LOG.read_text(encoding="utf-8")
    arena = tmp_path / "arena.jsonl"
    arena.write_text(text.replace('"random-1"', '"lowbot@2"', 1).replace('"random-3"', '"lowbot@1"', 1), "utf-8")
    seat_1 = run(str(arena), "--deal", "3", "--seat", "1").stdout
    for name in ("lowbot@2", "random-2"):
        assert run(str(arena), "--deal", "3", "--seat", name).exit_code == 0
    assert run(str(arena), "--deal", "3", "--seat", "lowbot@2").stdout == seat_1
    r = run(str(arena), "--seat", "lowbot")
    assert r.exit_code == 2 and "lowbot@1, lowbot@2 all play here; give one, e.g. --seat lowbot@1" in r.stderr
    one = tmp_path / "one.jsonl"
    one.write_text(text.replace('"random-1"', '"lowbot@2"', 1), "utf-8")
    assert run(str(one), "--deal", "3", "--seat", "lowbot").stdout == run(str(one), "--deal", "3", "--seat", "1").stdout
