"""The arena's matchmaking: which duplicate sets a continuous ladder plays next, from its ratings.

Plain values in, plain values out, no I/O; every random choice comes from the ``random.Random``
the caller passes, so the same state and seed choose the same sets. The policy and its reasons
are in docs/arena.md ("Matchmaking"). In short:

* a table plays a *duplicate set*: its seat rotations on the same deals
  (:func:`arbiter.tournament.schedule.rotations`), rated as one game
  (:func:`arbiter.tournament.ratings.game_outcome`); every set deals afresh, from a seed made of
  the arena's set counter (:func:`set_seed`), so no kept bot ever sees a deal twice;
* a table starts from its *seed player*, the entrant that needs games most: a new entrant
  (fewer than ``provisional`` matches, counting those in flight), the least played first and,
  among those, the highest by μ; then one that fell below its minimum share of matches
  (``min_share`` of the field's mean); otherwise anyone, drawn with weight *stake*: σ times the
  chance of standing in the wrong order with a neighbour (:func:`_stakes`), the uncertainty
  that matters to the leaderboard;
* a new seed player's opponents are the entrants just below it by μ among those that have
  played no more than it, a repeated meeting costing as much as ``rematch`` places further
  down: a field that starts together plays *Swiss rounds* (everyone once a round, each table
  four neighbours on the leaderboard that have met least) until it is established;
* an established seed player's opponents come from a window of μ around it whose half-width is
  drawn heavy-tailed: mostly its near neighbours, now and then anyone, so everyone meets everyone;
* a set's rotations may play at once: a set takes one of the arena's slots, and one unit of
  each of its entrants' capacity, per rotation;
* with fewer than 4 entrants copies fill the table, as the tournament schedule fills them.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from arbiter.tournament.schedule import derive_seed, field_groups, rotations, round_tables

SWISS_START = 20
"""Matches a new entrant plays in Swiss rounds before the stake and the window take over (five
sets): also how long the leaderboard marks it provisional (docs/arena.md, "Measured")."""
SET_NUMBERS = 2**32
"""Sets an arena can number: the counter is the low 32 bits of a set's seed (:func:`set_seed`)."""


@dataclass(frozen=True)
class Contender:
    """An active entrant as matchmaking sees it: its TrueSkill rating and how busy it is."""

    name: str
    mu: float
    sigma: float
    matches: int = 0  # matches played (rated)
    capacity: int = 4  # matches it may be in at once
    busy: int = 0  # matches in flight


@dataclass(frozen=True)
class Matchmaking:
    """The policy's settings (docs/arena.md, "Matchmaking")."""

    provisional: int = SWISS_START  # fewer matches: new (seeds tables first; provisional standing)
    min_share: float = 0.25  # an entrant below this share of the mean matches seeds before the draw
    window: float = 25 / 24  # the μ window's smallest half-width: a quarter of TrueSkill's β (25/6)
    tail: float = 1.0  # the window's tail: P(half-width ≥ x) = (window / x) ** (1 / tail)
    rematch: float = 4.0  # a new seed player's table: a repeated meeting costs this many places of μ


@dataclass(frozen=True)
class DuplicateSet:
    """One table of the ladder: its seating plays in every seat rotation on the deals of ``seed``."""

    number: int  # the arena's set counter; also the set's rated game
    seating: tuple[str, ...]  # the four seats of the first rotation
    seed: int  # seeds the deals of every rotation (:func:`set_seed`)

    def seatings(self) -> list[tuple[str, ...]]:
        """The seats of each match of the set, one per distinct rotation."""
        return rotations(self.seating)

    def entrants(self) -> frozenset[str]:
        return frozenset(self.seating)


def set_seed(arena_seed: int, number: int) -> int:
    """The deals' seed of set ``number``: the arena's own prefix above the counter, so two sets of
    one arena never share a seed (and so never their deals)."""
    if not 0 <= number < SET_NUMBERS:
        raise ValueError(f"set number {number} is outside 0..{SET_NUMBERS - 1}")
    return derive_seed(arena_seed, "arena-deals") * SET_NUMBERS + number


def next_sets(
    field: Sequence[Contender],
    slots: int,
    rng: random.Random,
    *,
    arena_seed: int,
    next_number: int,
    policy: Matchmaking = Matchmaking(),
    met: Mapping[frozenset[str], int] | None = None,
) -> list[DuplicateSet]:
    """The sets to start now, numbered from ``next_number``, filling at most ``slots`` matches.

    ``field`` is every active entrant, busy or not (ranks are over the whole field); ``met``
    how many sets each pair of them has shared (:func:`meetings`; none if not given). Tables are
    chosen one after the other until the slots or the free entrants run out; an empty list
    means nothing can start until a match ends."""
    names = [c.name for c in field]
    if len(set(names)) != len(names):
        raise ValueError("entrant names must be unique")
    if len(field) < 2:
        return []
    size = min(4, len(field))  # distinct entrants at a table
    per_set = len(rotations(_seating(names[:size], rng=None)))  # matches of one set
    stakes = _stakes(field)
    load = {c.name: c.busy for c in field}
    known = met or {}
    added: Counter[frozenset[str]] = Counter()  # the meetings of the sets chosen in this call

    def times_met(pair: frozenset[str]) -> int:
        return known.get(pair, 0) + added[pair]

    sets: list[DuplicateSet] = []
    while slots >= per_set:
        free = [c for c in field if c.capacity - load[c.name] >= per_set]
        if len(free) < size:
            break
        played = {c.name: c.matches + load[c.name] for c in field}  # in flight counts: it will be rated
        seed_player = _seed_player(free, field, played, stakes, policy, rng)
        if played[seed_player.name] < policy.provisional:
            opponents = _swiss_opponents(seed_player, free, played, size - 1, rng, times_met, policy.rematch)
        else:
            opponents = _window_opponents(seed_player, free, size - 1, policy, rng)
        group = [seed_player.name, *opponents]
        number = next_number + len(sets)
        sets.append(DuplicateSet(number, _seating(group, rng), set_seed(arena_seed, number)))
        slots -= per_set
        for name in group:
            load[name] += per_set
        added.update(meetings(group))
    return sets


def meetings(seating: Sequence[str]) -> list[frozenset[str]]:
    """The pairs of distinct entrants a set of ``seating`` makes meet (what ``met`` counts)."""
    names = sorted(set(seating))
    return [frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1 :]]


def _stakes(field: Sequence[Contender]) -> dict[str, float]:
    """How much a game of each entrant can still change the leaderboard: its σ times the
    probability that it stands in the wrong order with a neighbour (the entrants just above and
    below it by μ). Large for an uncertain entrant among close ones; near zero for one whose
    place is plain, however large its σ."""
    order = sorted(field, key=lambda c: -c.mu)
    swap = [
        0.5 * math.erfc(abs(a.mu - b.mu) / math.sqrt(2 * (a.sigma**2 + b.sigma**2) + 1e-18))
        for a, b in zip(order, order[1:], strict=False)
    ]
    stakes = {}
    for i, c in enumerate(order):
        near = (swap[i - 1] if i > 0 else 0.0) + (swap[i] if i < len(swap) else 0.0)
        stakes[c.name] = c.sigma * near
    return stakes


def _seed_player(
    free: list[Contender],
    field: Sequence[Contender],
    played: dict[str, int],
    stakes: dict[str, float],
    policy: Matchmaking,
    rng: random.Random,
) -> Contender:
    """The entrant a table is built around: the least played new entrant (the highest by μ among
    equals); else the least played of those below their minimum share; else drawn by stake."""
    new = [c for c in free if played[c.name] < policy.provisional]
    if new:
        least = min(played[c.name] for c in new)
        tied = [c for c in new if played[c.name] == least]
        top = max(c.mu for c in tied)
        return rng.choice([c for c in tied if c.mu == top])
    floor = policy.min_share * sum(played.values()) / len(field)
    behind = [c for c in free if played[c.name] < floor]
    if behind:
        least = min(played[c.name] for c in behind)
        return rng.choice([c for c in behind if played[c.name] == least])
    weights = [stakes[c.name] for c in free]
    if sum(weights) <= 0:
        weights = [1.0] * len(free)
    return rng.choices(free, weights=weights)[0]


def _swiss_opponents(
    seed_player: Contender,
    free: list[Contender],
    played: dict[str, int],
    count: int,
    rng: random.Random,
    times_met: Callable[[frozenset[str]], int],
    rematch: float,
) -> list[str]:
    """A new seed player's ``count`` opponents: the entrants just below it by μ (then just
    above), among the free ones that have played no more than it when there are enough of them,
    taken one by one, each the nearest once every meeting it would repeat at the table counts
    ``rematch`` places. As the seed player is the highest of the least played, a field that
    starts together is cut into tables of four neighbours, round after round, as Swiss rounds
    cut it, and Swiss pairings avoid rematches."""
    others = [c for c in free if c.name != seed_player.name]
    level = [c for c in others if played[c.name] <= played[seed_player.name]]
    if len(level) >= count:
        others = level
    rng.shuffle(others)  # entrants as high as each other in random order
    below = sorted((c for c in others if c.mu <= seed_player.mu), key=lambda c: -c.mu)
    above = sorted((c for c in others if c.mu > seed_player.mu), key=lambda c: c.mu)
    ranked = [c.name for c in below + above]
    table = [seed_player.name]
    for _ in range(min(count, len(ranked))):
        cost = [
            place + rematch * sum(times_met(frozenset((name, m))) for m in table) for place, name in enumerate(ranked)
        ]
        table.append(ranked.pop(cost.index(min(cost))))
    return table[1:]


def _window_opponents(
    seed_player: Contender,
    free: list[Contender],
    count: int,
    policy: Matchmaking,
    rng: random.Random,
) -> list[str]:
    """An established seed player's ``count`` opponents, drawn evenly from a heavy-tailed window
    of μ around it (widened to the nearest free entrants when too few are inside)."""
    half_width = policy.window / (1.0 - rng.random()) ** policy.tail
    others = [c for c in free if c.name != seed_player.name]
    rng.shuffle(others)  # entrants as near as each other in random order
    others.sort(key=lambda c: abs(c.mu - seed_player.mu))
    inside = [c.name for c in others if abs(c.mu - seed_player.mu) <= half_width]
    if len(inside) < count:
        inside = [c.name for c in others[:count]]
    return rng.sample(inside, count)


def _seating(group: Sequence[str], rng: random.Random | None) -> tuple[str, ...]:
    """The four seats of a table of ``group`` (its first member is the seed player): four
    entrants in a random circular order; fewer filled with copies as the tournament's
    duplicate schedule fills them, the seed player holding the doubled seat."""
    if len(group) >= 4:
        seat_order = list(group[1:])
        if rng is not None:
            rng.shuffle(seat_order)
        return (group[0], *seat_order)
    tables = round_tables(field_groups(group), 0, 0)
    return next(t for t in tables if t[0] == group[0])
