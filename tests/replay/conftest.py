"""Shared helpers for the replay tests: the fixed log, text rendering, a full-match log."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"
FIXED_LOG = DATA / "nq-domino-seed1.jsonl"
ARTIFACTS = ROOT / "test-artifacts"


def log_lines(path: Path = FIXED_LOG) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        return f.readlines()


def log_objects(path: Path = FIXED_LOG) -> list[dict]:
    return [json.loads(line) for line in log_lines(path)]


def render_text(lines: list[str], **kw) -> str:
    """The terminal rendering as plain text: width 100, no colour, trailing spaces dropped."""
    from arbiter.cli.replay import render
    from arbiter.replay.model import load_replay

    console = Console(width=100, color_system=None, record=True, file=io.StringIO(), highlight=False)
    render(load_replay(lines), console, **kw)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def check_golden(name: str, text: str) -> None:
    """Compare with tests/replay/golden/NAME; BARBU_UPDATE_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if os.environ.get("BARBU_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: run with BARBU_UPDATE_GOLDEN=1 to create it, then review it")
    want = path.read_text(encoding="utf-8")
    assert text == want, f"rendering differs from {path} (BARBU_UPDATE_GOLDEN=1 rewrites it after review)"


def with_bad_line(lines: list[str], deal: int, nth_play: int, card: str) -> tuple[list[str], int]:
    """A copy of the log with the nth play line of a deal changed to ``card``; (lines, line number)."""
    out = list(lines)
    seen = 0
    for i, text in enumerate(out):
        obj = json.loads(text)
        if obj["type"] == "play" and obj["deal"] == deal:
            seen += 1
            if seen == nth_play:
                obj["card"] = card
                out[i] = json.dumps(obj, separators=(",", ":")) + "\n"
                return out, i + 1
    raise AssertionError("no such play")


@pytest.fixture(scope="session")
def full_log(tmp_path_factory) -> Path:
    """A full standard 28-deal match log, played in-process by random players (seed 3)."""
    from barbu.rules import make_ruleset

    from arbiter.match.blocking import run_blocking
    from arbiter.referee.logfile import AtomicLogFile
    from arbiter.referee.loop import MatchSetup, Referee
    from arbiter.referee.players import RandomPlayer

    out = tmp_path_factory.mktemp("full") / "full-seed3.jsonl"
    setup = MatchSetup(make_ruleset("standard"), seed=3, first_declarer=0, match_id="selfplay-3")
    players = [RandomPlayer(seed=f"3/{s}", name=f"random-{s}") for s in range(4)]
    sink = AtomicLogFile(out)
    run_blocking(Referee(setup, players, sink).play())
    return sink.commit()
