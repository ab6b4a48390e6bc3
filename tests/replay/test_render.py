"""Terminal rendering: golden text of a fixed log (width 100, no colour)."""

from __future__ import annotations

import io

from rich.console import Console

from arbiter.cli.replay import render
from arbiter.replay.model import load_replay

from .conftest import check_golden, log_lines, render_text, with_bad_line


def test_golden_whole_match():
    check_golden("match.txt", render_text(log_lines()))


def test_golden_one_seat():
    """--seat 2: its own hand only, at every one of its decisions; the others' hands unseen."""
    text = render_text(log_lines(), seat=2)
    check_golden("seat2.txt", text)
    assert "13 cards, unseen" in text


def test_golden_one_deal():
    check_golden("deal1.txt", render_text(log_lines(), deal=1))


def test_golden_one_domino_deal_as_one_seat():
    check_golden("deal2-seat0.txt", render_text(log_lines(), deal=2, seat=0))


def test_golden_bad_line():
    lines, bad = with_bad_line(log_lines(), deal=1, nth_play=7, card="AS")
    text = render_text(lines)
    check_golden("bad-line.txt", text)
    assert f"✗ invalid: line {bad}: AS is not in your hand" in text


def test_seat_view_never_shows_other_hands():
    """Everything seat 2 is shown about another seat's cards was played in public."""
    import re

    text = render_text(log_lines(), seat=2)
    for line in text.splitlines():
        if re.match(r"S[013] random-[013]", line):
            assert "unseen" in line, line


def test_declarer_and_contract_are_always_in_view():
    text = render_text(log_lines())
    assert text.count("Deal 1 · declarer S0 random-0 · No Queens") == 1
    assert "Tricks — No Queens, declarer S0" in text
    assert "Domino — Domino from J, declarer S0" in text


def test_faults_are_shown_where_they_happen():
    text = render_text(log_lines(), deal=1)
    assert "⚠1 trick 3: fault S0 timeout: no answer within 1.0 s → substituted" in text


def test_colours_red_suits_only():
    """♥♦ cards in red, ♣♠ in the default colour; the trick winner in bold reverse."""
    import re

    console = Console(width=100, color_system="standard", force_terminal=True, file=io.StringIO(), highlight=False)
    render(load_replay(log_lines()), console, deal=1)
    out = console.file.getvalue()
    cards = re.findall(r"(?:\x1b\[([0-9;]*)m)?(10|[2-9JQKA])([♣♦♥♠])", out)
    assert len(cards) > 40
    for codes, _rank, suit in cards:
        red = "31" in codes.split(";")
        assert red == (suit in "♥♦"), (codes, _rank, suit)
    assert "\x1b[1;7;31mQ♦\x1b[0m" in out  # trick 2's winner: bold, reversed, red
