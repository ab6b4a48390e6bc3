"""The replay model: every line replayed with the engine, states and views at every decision."""

from __future__ import annotations

import json

from barbu.matchlog import verify
from barbu.rules import Phase, card_name, parse_card

from arbiter.replay.model import load_replay

from .conftest import log_lines, log_objects, with_bad_line


def test_every_line_becomes_an_event_with_states():
    lines = log_lines()
    replay = load_replay(lines)
    assert replay.valid and replay.verification.complete
    assert [e.number for e in replay.events] == list(range(2, len(lines) + 1))
    assert replay.header.match_id == "selfplay-1" and replay.header.entrants == tuple(
        replay.entrant(s) for s in range(4)
    )
    assert replay.events[-1].kind == "match_end"
    assert list(replay.events[-1].after.totals) == replay.verification.totals
    assert len(replay.deals()) == 8
    assert [r.index for r in replay.deals()] == list(range(8))
    assert replay.verdict().startswith("valid: complete, 8 deals")


def test_decisions_match_the_state_before_them():
    """At every decision the seat to act is the line's seat and the action is among its legal ones."""
    replay = load_replay(log_lines())
    decisions = replay.decisions()
    assert len(decisions) == sum(1 for o in log_objects() if o["type"] in ("declare", "double", "play"))
    for e in decisions:
        assert e.before.turn == e.seat
        view = e.view(e.seat)
        assert view.legal, e.line
        if e.kind == "play":
            card = e.line.card
            assert card == (None if e.line.obj["card"] is None else parse_card(e.line.obj["card"]))  # typed
            assert card in view.legal
            if card is not None:
                assert view.hand >> card & 1
                assert not e.after.hands[e.seat] >> card & 1


def test_views_hold_only_the_seats_own_hand_and_public_plays():
    replay = load_replay(log_lines())
    for e in replay.decisions()[::7]:
        for seat in range(4):
            view = e.view(seat)
            assert view.hand == e.before.hands[seat]
            others = 0
            for s in range(4):
                if s != seat:
                    others |= e.before.hands[s]
            assert view.hand & others == 0
            assert not hasattr(view, "dealt")  # a View never carries the dealt hands


def test_trick_lines_agree_with_the_states():
    replay = load_replay(log_lines())
    for e in replay.events:
        if e.kind == "trick":
            t = e.after.tricks[e.line.index]
            assert [card_name(c) for c in t.cards] == e.line.obj["cards"] and t.cards == e.line.cards
            assert t.winner == e.line.winner
        if e.kind == "deal_end":
            assert e.after.results[-1].totals == e.line.totals and list(e.line.totals) == e.line.obj["totals"]


def test_faults_are_events_of_their_deal():
    replay = load_replay(log_lines())
    faults = [e for e in replay.events if e.kind == "fault"]
    found = [(f.number, f.deal, f.seat, f.line.kind) for f in faults]
    assert found == [(80, 1, 0, "timeout"), (157, 2, 0, "illegal")]
    deal1 = replay.deals()[1]
    assert any(e.kind == "fault" for e in deal1.events)
    # the decision after a fault is the arbiter's substitute, marked auto
    after = next(e for e in replay.events if e.number == 81)
    assert after.kind == "play" and after.auto and after.ms is None


def test_a_bad_line_replays_up_to_it_and_names_it():
    lines, bad = with_bad_line(log_lines(), deal=1, nth_play=7, card="AS")
    replay = load_replay(lines)
    v = verify(lines)
    assert not replay.valid
    assert replay.bad_line == v.line == bad
    assert replay.error == v.error
    assert replay.events[-1].number == bad - 1 == replay.last_line
    assert '"card":"AS"' in replay.bad_text
    assert replay.verdict() == f"invalid: line {bad}: {v.error}"
    # the state at the end is mid-deal 1, with 6 cards played
    last = replay.events[-1].after
    assert last.deal_index == 1 and last.phase is Phase.PLAY
    assert sum(13 - h.bit_count() for h in last.hands) == 6


def test_a_log_cut_mid_line_replays_as_far_as_it_goes():
    lines = log_lines()
    cut = lines[:100] + [lines[100][:25]]
    replay = load_replay(cut)
    assert replay.valid and not replay.verification.complete
    assert replay.cut and replay.last_line == 100
    assert "incomplete (cut short after line 100)" in replay.verdict()


def test_a_bad_header_gives_no_events():
    replay = load_replay(['{"type":"deal"}\n'])
    assert not replay.valid and replay.bad_line == 1 and replay.events == []
    empty = load_replay([])
    assert not empty.valid and empty.bad_line == 1


def test_seed_de_fr_and_extra_round_logs_replay(tmp_path):
    """Other rules (7♦ Domino start, left-of-declarer lead, extra redouble round) replay too."""
    from barbu.rules import make_ruleset

    from arbiter.match.blocking import run_blocking
    from arbiter.referee.logfile import AtomicLogFile
    from arbiter.referee.loop import MatchSetup, Referee
    from arbiter.referee.players import RandomPlayer

    cases = (("seed_de_fr", {}), ("standard", {"redouble_window": "extra_round", "contracts": ["trumps", "domino"]}))
    for preset, overrides in cases:
        path = tmp_path / f"{preset}.jsonl"
        setup = MatchSetup(make_ruleset(preset, overrides), seed=5, first_declarer=2, match_id=preset)
        sink = AtomicLogFile(path)
        run_blocking(Referee(setup, [RandomPlayer(seed=f"5/{s}", name=f"r{s}") for s in range(4)], sink).play())
        sink.commit()
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        replay = load_replay(lines)
        assert replay.valid and replay.verification.complete, replay.verdict()
        assert json.loads(lines[-1])["totals"] == list(replay.events[-1].after.totals)


def test_an_aborted_match_replays_and_says_so():
    from .conftest import render_text

    objs = log_objects()
    cut = next(i for i, o in enumerate(objs) if o["type"] == "play" and o["deal"] == 1)  # deal 1 underway
    totals = next(o["totals"] for o in objs if o["type"] == "deal_end" and o["deal"] == 0)
    end = {"type": "match_end", "status": "aborted", "reason": "seat 2 forfeited", "totals": totals}
    lines = log_lines()[: cut + 3] + [json.dumps(end) + "\n"]  # three cards of trick 1 played
    replay = load_replay(lines)
    assert replay.valid and not replay.verification.complete
    assert replay.verdict().startswith("valid: aborted (seat 2 forfeited), 1 deals")
    text = render_text(lines)
    assert "Match aborted (seat 2 forfeited)" in text
    assert "(the log stops inside this deal)" in text


def test_split_deals_without_play_lines_replay(tmp_path):
    """undoubled_negative=split: deals with no play lines at all, in the terminal and the page."""
    import random

    from barbu.matchlog import MatchLogWriter
    from barbu.rules import deal, legal_actions, make_ruleset, new_match, shuffle_hands

    from arbiter.web import build_data

    from .conftest import render_text

    contracts = ["no_tricks", "no_queens", "no_hearts"]  # a first deal of 3 has no forced double
    rules = make_ruleset("standard", {"undoubled_negative": "split", "contracts": contracts})
    lines: list[str] = []
    writer = MatchLogWriter(lambda s: lines.append(s + "\n"), rules=rules, first_declarer=0,
                            seats=[{"seat": s, "entrant": f"p{s}"} for s in range(4)], match_id="split")  # fmt: skip
    state, rng = new_match(rules, 0), random.Random(7)
    while not state.is_over:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            writer.dealt(state)
            continue
        seat, legal = state.turn, legal_actions(state)
        action = () if () in legal else legal[0]  # never double unless forced
        state.apply(action)
        writer.acted(state, seat, action)
    replay = load_replay(lines)
    assert replay.valid and replay.verification.complete
    ends = [e.line.reason for e in replay.events if e.kind == "deal_end"]
    assert "split" in ends
    split_deal = ends.index("split")
    text = render_text(lines, deal=split_deal)
    assert "ends: undoubled: split, not played" in text and "Tricks —" not in text
    data = build_data(replay)
    end_step = next(s for s in data["steps"] if s["k"] == "deal_end" and s["d"] == split_deal)
    assert end_step["tr"] is None and sum(len(h) for h in end_step["h"]) == 52
