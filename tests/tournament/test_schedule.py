"""Schedules: fair seats, balanced opponents, duplicate sets on the same cards, deterministic."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from arbiter.tournament.formats import build_schedule
from arbiter.tournament.schedule import block_deals, field_groups, games, rotations, round_tables

NAMES = [f"e{i}" for i in range(8)]


def seat_counts(schedule):
    counts = Counter()
    for m in schedule:
        for seat, name in enumerate(m.seats):
            counts[name, seat] += 1
    return counts


def assert_seats_balanced(schedule, names):
    counts = seat_counts(schedule)
    for name in names:
        per_seat = [counts[name, s] for s in range(4)]
        assert len(set(per_seat)) == 1 and per_seat[0] > 0, (name, per_seat)


def matches_of(schedule, name):
    return sum(1 for m in schedule if name in m.seats)


def meetings(schedule):
    met = Counter()
    for m in schedule:
        for a, b in itertools.combinations(sorted(set(m.seats)), 2):
            met[a, b] += 1
    return met


@pytest.mark.parametrize("fmt", ["round_robin", "duplicate"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_round_robin_is_fair(fmt, n):
    names = NAMES[:n]
    schedule = build_schedule(fmt, names, rounds=2, seed=3)
    assert_seats_balanced(schedule, names)
    assert len({matches_of(schedule, e) for e in names}) == 1  # everyone plays as often
    met = meetings(schedule)
    assert len(met) == n * (n - 1) // 2 and len(set(met.values())) == 1  # everyone meets everyone equally
    if n >= 4:
        assert all(len(set(m.seats)) == 4 for m in schedule)  # no copies when there are enough entrants
    assert [m.number for m in schedule] == list(range(len(schedule)))
    assert len({m.key for m in schedule}) == len(schedule)


@pytest.mark.parametrize("n", [5, 8, 12])
def test_a_round_plays_its_tables_in_balanced_order(n):
    """However far a round has gone, everyone has played about as many tables (within two; three
    now and then among a round's last tables, which are what is left): a
    tournament stopped, or read, before the round ends has spread its matches over the field.
    The round itself is unchanged: every table of four once."""
    names = [f"e{i:02d}" for i in range(n)]
    for r in range(2):
        tables = round_tables(field_groups(names), r, seed=4)
        assert sorted(tuple(sorted(t)) for t in tables) == list(itertools.combinations(sorted(names), 4))
        played = Counter()
        for k, table in enumerate(tables, start=1):
            played.update(table)
            spread = max(played[e] for e in names) - min(played[e] for e in names)
            assert spread <= (2 if k <= 0.9 * len(tables) else 3)  # the last tables are what is left
        assert round_tables(field_groups(names), r, seed=4) == tables  # deterministic from the seed
    assert round_tables(field_groups(names), 0, seed=4) != round_tables(field_groups(names), 0, seed=5)


def test_match_counts():
    assert len(build_schedule("round_robin", NAMES[:4], 1, 0)) == 4  # 1 table x 4 rotations
    assert len(build_schedule("round_robin", NAMES[:5], 1, 0)) == 20  # C(5,4) tables x 4
    assert len(build_schedule("round_robin", NAMES[:2], 1, 0)) == 2  # A B A B has 2 rotations
    assert len(build_schedule("round_robin", NAMES[:3], 1, 0)) == 12  # x y x z for each x, 4 rotations
    assert len(build_schedule("gauntlet", NAMES[:5], 1, 0, challenger="e0")) == 16  # C(4,3) x 4


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_gauntlet(n):
    names = NAMES[:n]
    challenger = names[1]
    field = [e for e in names if e != challenger]
    schedule = build_schedule("gauntlet", names, rounds=2, seed=5, challenger=challenger)
    assert all(m.seats.count(challenger) == 1 for m in schedule)  # one challenger per table
    counts = seat_counts(schedule)
    assert len({counts[challenger, s] for s in range(4)}) == 1
    seats_of_field = Counter()
    for m in schedule:
        for name in m.seats:
            if name != challenger:
                seats_of_field[name] += 1
    assert len({seats_of_field[f] for f in field}) == 1  # every field member faces the challenger equally
    assert_seats_balanced(schedule, names)


def test_duplicate_sets_replay_the_same_deals_with_every_hand_held_by_everyone():
    names = NAMES[:5]
    schedule = build_schedule("duplicate", names, rounds=1, seed=9)
    sets = games(schedule)
    assert len(sets) == 5 and all(len(s) == 4 for s in sets)
    for numbers in sets:
        ms = [schedule[n] for n in numbers]
        assert len({m.seed for m in ms}) == 1 and len({m.deal_block for m in ms}) == 1
        assert len({m.game for m in ms}) == 1
        held = Counter((name, seat) for m in ms for seat, name in enumerate(m.seats))
        for name in set(ms[0].seats):
            assert [held[name, s] for s in range(4)] == [1, 1, 1, 1]
    assert len({schedule[s[0]].seed for s in sets}) == len(sets)  # each set its own deals
    # Two entrants: A B A B, and B A B A: each holds every hand once.
    two = build_schedule("duplicate", ["a", "b"], rounds=1, seed=0)
    assert [m.seats for m in two] == [("a", "b", "a", "b"), ("b", "a", "b", "a")]


def test_plain_formats_rate_every_match_and_deal_every_match_afresh():
    schedule = build_schedule("round_robin", NAMES[:4], rounds=2, seed=1)
    assert games(schedule) == [[m.number] for m in schedule]
    assert len({m.seed for m in schedule}) == len(schedule)
    assert [m.deal_block for m in schedule] == list(range(len(schedule)))


def test_deterministic_from_the_seed():
    a = build_schedule("round_robin", NAMES[:6], 2, seed=11)
    b = build_schedule("round_robin", NAMES[:6], 2, seed=11)
    c = build_schedule("round_robin", NAMES[:6], 2, seed=12)
    assert a == b
    assert [m.seats for m in a] != [m.seats for m in c] and [m.seed for m in a] != [m.seed for m in c]
    # More rounds extend the schedule: the first rounds stay as they were (a tournament may grow).
    assert build_schedule("round_robin", NAMES[:6], 3, seed=11)[: len(a)] == a


def test_circular_orders_change_from_round_to_round():
    schedule = build_schedule("round_robin", NAMES[:4], rounds=6, seed=2)
    firsts = {tuple(m.seats) for m in schedule if m.rotation == 0}

    # Over 6 rounds, the 6 circular seating orders of the 4 entrants (who sits on whose left).
    def canonical(seats):
        i = seats.index("e0")
        return seats[i:] + seats[:i]

    assert len({canonical(s) for s in firsts}) == 6


def test_rotations_and_deal_blocks():
    assert rotations(("a", "b", "c", "d")) == [
        ("a", "b", "c", "d"),
        ("d", "a", "b", "c"),
        ("c", "d", "a", "b"),
        ("b", "c", "d", "a"),
    ]
    assert rotations(("a", "b", "a", "b")) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    deals = [[i] * 4 for i in range(10)]
    assert block_deals(deals, 0, 4) == deals[0:4]
    assert block_deals(deals, 2, 4) == [deals[8], deals[9], deals[0], deals[1]]  # cyclic


def test_bad_arguments():
    with pytest.raises(ValueError):
        build_schedule("swiss", NAMES[:4], 1, 0)
    with pytest.raises(ValueError):
        build_schedule("gauntlet", NAMES[:4], 1, 0)
    with pytest.raises(ValueError):
        build_schedule("round_robin", NAMES[:1], 1, 0)
