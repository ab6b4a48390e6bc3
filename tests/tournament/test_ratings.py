"""Ratings and standings from plain match records."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from arbiter.model import MatchRecord, SeatRecord
from arbiter.stats import t_quantile
from arbiter.tournament.formats import build_schedule
from arbiter.tournament.ratings import game_outcome, mean_with_ci, replay, standings


def match(number, seats, totals, game=None, forfeits=(), status="complete", faults=None):
    faults = faults or [0, 0, 0, 0]
    return MatchRecord(
        number,
        number if game is None else game,
        status,
        tuple(SeatRecord(e, t, s in forfeits, faults[s]) for s, (e, t) in enumerate(zip(seats, totals, strict=True))),
    )


def test_places_ties_and_forfeits():
    m = match(0, "abcd", [100, 20, 20, -140])
    assert game_outcome([m]).places() == {"a": 1, "b": 2, "c": 2, "d": 4}
    m = match(0, "abcd", [100, 20, 20, -140], forfeits=[0])
    assert game_outcome([m]).places() == {"a": 4, "b": 1, "c": 1, "d": 3}
    m = match(0, "abcd", [100, 20, 20, -140], forfeits=[0, 3])
    assert game_outcome([m]).places() == {"a": 3, "b": 1, "c": 1, "d": 4}  # forfeiters ordered by score
    assert game_outcome([match(0, "abcd", [1, 2, 3, 4], status="aborted")]) is None


def test_copies_are_one_entrant_scoring_the_mean_of_their_seats():
    m = match(0, "abab", [10, -30, 30, -10])
    assert m.scores() == {"a": 20, "b": -20}
    outcome = game_outcome([m])
    assert outcome.places() == {"a": 1, "b": 2}
    book, history = replay("ab", [m])
    assert book.ratings["a"].mu > 25 > book.ratings["b"].mu and book.games == {"a": 1, "b": 1}
    # one forfeiting copy makes the whole entrant last
    assert game_outcome([match(0, "abab", [10, -30, 30, -10], forfeits=[2])]).places() == {"a": 2, "b": 1}


def test_a_duplicate_set_is_one_game_ranked_by_the_mean_over_the_set():
    # Two rotations on the same cards: b wins the first match, a wins the set.
    m0 = match(0, "abab", [-10, 5, -10, 15], game=0)  # a -10, b +10
    m1 = match(1, "baba", [40, -50, 60, -50], game=0)  # b +50, a -50 ... a loses more
    outcome = game_outcome([m0, m1])
    assert outcome.scores == {"a": Fraction(-30), "b": Fraction(30)}
    assert outcome.places() == {"a": 2, "b": 1} and outcome.last_match == 1
    book, history = replay("ab", [m0, m1])
    assert len(history) == 1  # one update for the set, not one per match
    table = standings("ab", [m0, m1], duplicate=True)
    by = {r.name: r for r in table}
    assert by["b"].duplicate_diff == 60 and by["a"].duplicate_diff == -60
    assert by["a"].matches == 2 and by["a"].mean_score == -30


def test_replay_is_in_schedule_order_whatever_the_completion_order():
    schedule = build_schedule("round_robin", list("abcde"), rounds=1, seed=4)
    rng = random.Random(1)
    records = []
    for m in schedule:
        totals = [rng.randrange(-200, 200) for _ in range(3)]
        records.append(match(m.number, m.seats, [*totals, -sum(totals)]))
    shuffled = records[:]
    rng.shuffle(shuffled)
    a, _ = replay("abcde", records)
    b, _ = replay("abcde", shuffled)
    assert {e: (r.mu, r.sigma) for e, r in a.ratings.items()} == {e: (r.mu, r.sigma) for e, r in b.ratings.items()}


def test_standings_table():
    records = [
        match(0, "abcd", [100, 0, -50, -50], faults=[0, 2, 0, 0]),
        match(1, "bcda", [0, -50, -50, 100], forfeits=[1], faults=[0, 3, 0, 0]),
        match(2, "cdab", [-50, -50, 100, 0], status="aborted"),
    ]
    table = standings("abcd", records)
    by = {r.name: r for r in table}
    assert table[0].name == "a" and [r.rank for r in table] == [1, 2, 3, 4]
    assert by["a"].matches == 2 and by["a"].mean_score == 100 and by["a"].ci95 == (100, 100)
    assert by["b"].faults == 2 and by["c"].faults == 3 and by["c"].forfeits == 1
    row = by["a"].to_json()
    assert set(row) >= {"name", "mu", "sigma", "rating", "matches", "mean_score", "ci95", "faults"}
    assert row["rating"] == pytest.approx(row["mu"] - 3 * row["sigma"], abs=1e-3)
    assert table[0].rating >= table[1].rating >= table[2].rating


def test_confidence_intervals():
    # the standings use the A/B test's interval: the exact quantile of Student's t
    assert mean_with_ci([]) == (None, None)
    assert mean_with_ci([5.0]) == (5.0, None)
    mean, (lo, hi) = mean_with_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and hi - mean == pytest.approx(3.1824 * (1.6666666 / 4) ** 0.5, rel=1e-4)
    assert mean - lo == pytest.approx(hi - mean)
    assert t_quantile(0.975, 1) == pytest.approx(12.7062, abs=1e-4) and t_quantile(0.975, 35) == pytest.approx(
        2.0301, abs=1e-4
    )


def test_the_table_is_ordered_by_mu_with_newcomers_marked_provisional_or_by_the_margin_rating():
    from arbiter.model import PROVISIONAL_MATCHES
    from arbiter.tournament.ratings import Standing, ranked

    def rows():
        return [
            Standing("veteran", 27.0, 1.0, matches=40, margin=12.0),
            Standing("newcomer", 29.0, 5.0, matches=PROVISIONAL_MATCHES - 1, margin=-4.0),
            Standing("steady", 27.0, 1.0, matches=PROVISIONAL_MATCHES, margin=15.0),
        ]

    # μ − 3σ would put the newcomer last for having played little (14 against 24)
    assert [r.name for r in sorted(rows(), key=lambda r: -r.rating)][-1] == "newcomer"
    by_mu = ranked(rows())
    assert [(r.rank, r.name, r.provisional) for r in by_mu] == [
        (1, "newcomer", True),
        (2, "steady", False),  # equal μ: the better margin first
        (3, "veteran", False),
    ]
    by_margin = ranked(rows(), "margins")
    assert [r.name for r in by_margin] == ["steady", "veteran", "newcomer"]
    assert [r.provisional for r in ranked(rows(), provisional=0)] == [False] * 3
    with pytest.raises(ValueError, match="rating must be one of trueskill, margins, got 'elo'"):
        ranked(rows(), "elo")


def test_standings_carry_the_margin_ratings_of_the_rated_games():
    from arbiter.tournament.margins import margin_ratings

    matches = [
        match(n, "abcd" if n % 2 else "bcda", [90, 10, -30, -70] if n % 2 else [60, 0, -20, -40]) for n in range(8)
    ]
    table = {r.name: r for r in standings("abcd", matches, rating="margins")}
    sets = [{e: float(s) for e, s in m.scores().items()} for m in matches]
    expected = margin_ratings("abcd", sets)
    for name, row in table.items():
        assert row.margin == pytest.approx(expected.ratings[name].rating, abs=1e-12)
        assert row.margin_sd == pytest.approx(expected.ratings[name].sd, abs=1e-12)
    assert [table[n].rank for n in expected.order()] == [1, 2, 3, 4]
    assert table["a"].to_json()["margin"] == round(table["a"].margin, 3) and table["a"].to_json()["provisional"]
