"""The arena's matchmaking: slots and capacity, who plays first, who meets whom, duplicate sets."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from arbiter.arena.matchmaking import Contender, DuplicateSet, Matchmaking, meetings, next_sets, set_seed
from arbiter.model import MatchRecord, SeatRecord
from arbiter.tournament.ratings import ENV, RatingBook, game_outcome


def field_of(count: int, *, capacity: int = 4, spread: float = 2.0, matches: int = 100) -> list[Contender]:
    """Established entrants with well separated levels: e00 best."""
    return [Contender(f"e{i:02d}", 40.0 - spread * i, 1.0, matches, capacity) for i in range(count)]


def ladder(
    field: list[Contender], tables: int, seed: int = 7, slots: int = 4, policy: Matchmaking = Matchmaking()
) -> list[DuplicateSet]:
    """``tables`` sets chosen one batch after another, each batch finished before the next (ratings
    fixed; the matches played are counted)."""
    rng, played, chosen = random.Random(seed), {c.name: c.matches for c in field}, []
    while len(chosen) < tables:
        now = [Contender(c.name, c.mu, c.sigma, played[c.name], c.capacity) for c in field]
        batch = next_sets(now, slots, rng, arena_seed=seed, next_number=len(chosen), policy=policy)
        assert batch, "an idle field always gets a table"
        for s in batch:
            for name in s.entrants():
                played[name] += len(s.seatings())
        chosen += batch
    return chosen


def test_slots_and_capacity_are_respected():
    rng = random.Random(1)
    for _ in range(200):
        field = [
            Contender(f"e{i}", rng.uniform(10, 40), rng.uniform(1, 8), rng.randrange(50), rng.choice([4, 8, 12]))
            for i in range(rng.randrange(2, 12))
        ]
        field = [
            Contender(c.name, c.mu, c.sigma, c.matches, c.capacity, busy=rng.choice([0, 4, c.capacity])) for c in field
        ]
        slots = rng.randrange(0, 30)
        sets = next_sets(field, slots, rng, arena_seed=3, next_number=0)
        assert sum(len(s.seatings()) for s in sets) <= slots
        load = Counter({c.name: c.busy for c in field})
        for s in sets:
            for name in s.entrants():
                load[name] += len(s.seatings())
        assert all(load[c.name] <= c.capacity for c in field)


def test_the_slots_are_filled_while_entrants_are_free():
    sets = next_sets(field_of(12, capacity=4), 12, random.Random(2), arena_seed=1, next_number=0)
    assert len(sets) == 3  # 12 slots, 3 tables of 4 distinct entrants: everyone seated once
    assert set().union(*(s.entrants() for s in sets)) == {f"e{i:02d}" for i in range(12)}


def test_nothing_starts_without_free_slots_or_enough_free_entrants():
    field = field_of(5)
    assert next_sets(field, 3, random.Random(1), arena_seed=1, next_number=0) == []
    busy = [Contender(c.name, c.mu, c.sigma, c.matches, 4, busy=4 if i < 2 else 0) for i, c in enumerate(field)]
    assert next_sets(busy, 40, random.Random(1), arena_seed=1, next_number=0) == []  # 3 free of 5
    assert next_sets(field[:1], 40, random.Random(1), arena_seed=1, next_number=0) == []


def test_a_new_entrant_plays_first():
    for seed in range(20):
        field = field_of(9)
        field.insert(seed % 9, Contender("newcomer", 25.0, 25.0 / 3, matches=0))
        first = next_sets(field, 4, random.Random(seed), arena_seed=seed, next_number=0)
        assert first[0].seating[0] == "newcomer"


def test_new_entrants_play_most_until_they_are_established():
    field = field_of(8) + [Contender("new-a", 25.0, 25.0 / 3, 0), Contender("new-b", 25.0, 25.0 / 3, 0)]
    sets = ladder(field, 8)
    count = Counter(name for s in sets for name in s.entrants())
    policy = Matchmaking()
    assert count["new-a"] * 4 >= policy.provisional and count["new-b"] * 4 >= policy.provisional
    established = [count[c.name] for c in field if not c.name.startswith("new")]
    assert min(count["new-a"], count["new-b"]) > 2 * sum(established) / len(established)


def test_a_field_that_starts_together_plays_swiss_rounds():
    """Every entrant new: the first round seats everyone once; later rounds cut the leaderboard
    (by μ) into tables of four neighbours, everyone once a round, until the field is established."""
    names = [f"e{i:02d}" for i in range(12)]
    fresh = [Contender(n, 25.0, 25.0 / 3, 0) for n in names]
    first = next_sets(fresh, 12, random.Random(1), arena_seed=1, next_number=0)
    assert sorted(n for s in first for n in s.entrants()) == names  # a partition of the field
    ranked = [Contender(n, 40.0 - i, 7.0, 4) for i, n in enumerate(random.Random(2).sample(names, 12))]
    second = next_sets(ranked, 12, random.Random(3), arena_seed=1, next_number=3)
    by_level = [c.name for c in ranked]  # best first
    assert [s.entrants() for s in second] == [frozenset(by_level[i : i + 4]) for i in (0, 4, 8)]
    established = [Contender(c.name, c.mu, c.sigma, Matchmaking().provisional) for c in ranked]
    later = [next_sets(established, 12, random.Random(s), arena_seed=1, next_number=0) for s in range(20)]
    assert any(
        s.entrants() not in map(frozenset, (by_level[0:4], by_level[4:8], by_level[8:12])) for b in later for s in b
    )


def test_a_swiss_table_avoids_rematches_at_the_cost_the_policy_gives():
    """a..h ranked best first, a's last table was a b c d: plain Swiss seats those four again;
    at 4 places a meeting, a sits with the next unmet ones (e, f, g: 3, 4, 5 places down
    against 4, 5, 6 for b, c, d with their meeting)."""
    names = "abcdefgh"
    field = [Contender(n, 40.0 - i, 7.0, 4) for i, n in enumerate(names)]
    met = Counter(meetings("abcd"))
    assert len(met) == 6 and met[frozenset("ab")] == 1

    def first_table(rematch: float) -> frozenset[str]:
        sets = next_sets(
            field, 4, random.Random(1), arena_seed=1, next_number=0, policy=Matchmaking(rematch=rematch), met=met
        )
        return sets[0].entrants()

    assert first_table(0.0) == frozenset("abcd")
    assert first_table(4.0) == frozenset("aefg")
    assert first_table(Matchmaking().rematch) == frozenset("aefg")


def test_a_new_seed_player_meets_those_that_played_no_more_than_it():
    """Counting matches in flight: while some entrants of a starting field are still in their
    first set, the next table is made of the others."""
    field = [Contender(f"e{i}", 25.0, 25.0 / 3, 0, capacity=8, busy=4 if i < 4 else 0) for i in range(8)]
    (table,) = next_sets(field, 4, random.Random(4), arena_seed=1, next_number=1)
    assert table.entrants() == {"e4", "e5", "e6", "e7"}


def test_a_newcomer_to_an_established_field_meets_those_just_below_it():
    """Alone and new, it seeds its tables, against the entrants just below its μ: each set moves
    it towards its level, and the next set is played there."""
    field = field_of(12) + [Contender("newcomer", 26.0, 25.0 / 3, 0)]
    (table,) = next_sets(field, 4, random.Random(5), arena_seed=1, next_number=0)
    below = sorted((c for c in field if c.mu <= 26.0 and c.name != "newcomer"), key=lambda c: -c.mu)
    assert table.seating[0] == "newcomer" and table.entrants() == {"newcomer", *(c.name for c in below[:3])}


def test_every_entrant_plays_and_everyone_meets_everyone():
    field = field_of(12)
    sets = ladder(field, 3000, slots=12)
    met = {frozenset(pair) for s in sets for pair in itertools.combinations(s.entrants(), 2)}
    assert met == {frozenset(pair) for pair in itertools.combinations([c.name for c in field], 2)}


def test_opponents_near_in_level_meet_more_often_than_far():
    field = field_of(12)
    rank = {c.name: i for i, c in enumerate(field)}
    sets = ladder(field, 3000, slots=12)
    meetings = Counter(frozenset(pair) for s in sets for pair in itertools.combinations(sorted(s.entrants()), 2))
    by_distance: dict[int, list[int]] = {}
    for a, b in itertools.combinations(rank, 2):
        by_distance.setdefault(abs(rank[a] - rank[b]), []).append(meetings[frozenset((a, b))])
    mean = {d: sum(v) / len(v) for d, v in by_distance.items()}
    assert mean[1] > mean[3] > mean[6] > mean[9]
    assert mean[1] > 3 * mean[9]


def test_the_uncertain_seed_tables_more_often():
    field = field_of(8)
    field[3] = Contender(field[3].name, field[3].mu, 6.0, field[3].matches)
    seeds = Counter(s.seating[0] for s in ladder(field, 800))
    assert seeds[field[3].name] > 2 * max(v for k, v in seeds.items() if k != field[3].name)


def test_same_state_and_seed_choose_the_same_sets():
    field = field_of(10, capacity=8)
    first = next_sets(field, 16, random.Random(5), arena_seed=9, next_number=40)
    assert first == next_sets(field, 16, random.Random(5), arena_seed=9, next_number=40)
    assert first != next_sets(field, 16, random.Random(6), arena_seed=9, next_number=40)


def test_a_set_is_four_rotations_of_one_seating_on_its_own_fresh_deals():
    sets = ladder(field_of(6), 500)
    assert [s.number for s in sets] == list(range(500))
    assert len({s.seed for s in sets}) == 500  # every set deals afresh
    assert all(s.seed == set_seed(7, s.number) for s in sets)
    for s in sets:
        seatings = s.seatings()
        assert len(seatings) == 4 and len(set(s.seating)) == 4
        for k, seats in enumerate(seatings):  # rotation k: everyone moved k seats on
            assert seats == tuple(s.seating[(seat - k) % 4] for seat in range(4))
        for name in s.seating:  # each entrant holds each of the four hands once
            assert sorted(seats.index(name) for seats in seatings) == [0, 1, 2, 3]


def test_set_seeds_never_repeat_and_stay_inside_64_bits():
    seeds = {set_seed(11, n) for n in range(100_000)}
    assert len(seeds) == 100_000 and max(seeds) < 2**63
    assert set_seed(11, 0) != set_seed(12, 0)
    with pytest.raises(ValueError):
        set_seed(11, 2**32)


@pytest.mark.parametrize(
    ("names", "rotations"),
    [(["a", "b", "c"], 4), (["a", "b"], 2)],
)
def test_fewer_than_four_entrants_fill_the_table_with_copies(names, rotations):
    field = [Contender(n, 25.0, 8.0, matches=10 * i) for i, n in enumerate(names)]
    (table,) = next_sets(field, rotations, random.Random(1), arena_seed=1, next_number=0)
    assert table.seating[0] == "a"  # the least played sits in the doubled seat
    assert set(table.seating) == set(names) and len(table.seatings()) == rotations
    counts = Counter(table.seating)
    assert counts["a"] == 2 and all(counts[n] >= 1 for n in names)


def test_ratings_keep_moving_tau_above_zero():
    """The arena rates with the tournament's TrueSkill; its dynamics factor keeps σ off zero, so an
    entrant's rating still follows when its strength against the field changes."""
    assert ENV.tau > 0
    book = RatingBook(["a", "b", "c", "d"])
    for game in range(2000):
        seats = tuple(SeatRecord(name, -10 * ((game + i) % 4)) for i, name in enumerate("abcd"))
        outcome = game_outcome([MatchRecord(game, game, "complete", seats)])
        assert outcome is not None
        book.rate(outcome)
    assert min(r.sigma for r in book.ratings.values()) > 0.5


def test_an_entrant_whose_place_is_plain_seeds_rarely_however_large_its_sigma():
    """The seed player is drawn by stake: σ times the chance of being out of order with a
    neighbour. An entrant far below a close field has the largest σ and nearly no stake (its
    minimum share, which would seat it now and then, is off here)."""
    field = field_of(4) + [Contender("far", 0.0, 3.0, 100)]
    seeds = Counter(s.seating[0] for s in ladder(field, 800, policy=Matchmaking(min_share=0.0)))
    assert seeds["far"] < 0.05 * 800
    assert min(seeds[c.name] for c in field[:4]) > 0.1 * 800


def test_a_table_leaves_out_the_entrant_whose_place_is_plain():
    """Four close entrants and one far below: most tables are the four close ones, where every
    game still decides something."""
    field = field_of(4) + [Contender("far", 0.0, 3.0, 100)]
    sets = ladder(field, 800)
    assert sum("far" not in s.entrants() for s in sets) > 0.6 * len(sets)


@pytest.mark.parametrize("min_share", [0.25, 0.5])
def test_every_entrant_keeps_its_minimum_share_of_matches(min_share):
    """However plain its place, an entrant keeps playing at least ``min_share`` of the field's
    mean rate (counting from a common start), so its rating still follows a changing field."""
    field = [Contender(c.name, c.mu, c.sigma, 0) for c in field_of(8)] + [Contender("far", -50.0, 3.0, 0)]
    policy = Matchmaking(provisional=0, min_share=min_share)
    rng, played = random.Random(3), {c.name: 0 for c in field}
    for number in range(600):
        now = [Contender(c.name, c.mu, c.sigma, played[c.name]) for c in field]
        (table,) = next_sets(now, 4, rng, arena_seed=3, next_number=number, policy=policy)
        for name in table.entrants():
            played[name] += 4
        mean = sum(played.values()) / len(played)
        assert played["far"] >= min_share * mean - 4  # at most one set behind its floor
    assert played["far"] < 0.75 * mean  # the floor is what seats it, not the draw
