"""The arena's matchmaking: which duplicate sets a continuous ladder plays next, from its ratings.

Plain values in, plain values out, no I/O; every random choice comes from the ``random.Random``
the caller passes, so the same state and seed choose the same sets. The policy and its reasons
are in docs/arena.md ("Matchmaking"). In short:

* a table plays a *duplicate set*: its seat rotations on the same deals
  (:func:`arbiter.tournament.schedule.rotations`), rated as one game
  (:func:`arbiter.tournament.ratings.game_outcome`); every set deals afresh, from a seed made of
  the arena's set counter (:func:`set_seed`), so no kept bot ever sees a deal twice;
* a table starts from its *seed player*, the entrant that needs games most: a new entrant
  (fewer than ``provisional`` matches, counting those in flight), the least played first;
  otherwise anyone, drawn with weight σ;
* its opponents come from a *rank window* around the seed player (ranks by μ) whose half-width
  is drawn heavy-tailed: mostly its neighbours, now and then anyone, so everyone meets everyone;
* a set's rotations may play at once: a set takes one of the arena's slots, and one unit of
  each of its entrants' capacity, per rotation;
* with fewer than 4 entrants copies fill the table, as the tournament schedule fills them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from arbiter.tournament.schedule import derive_seed, rotations, round_tables

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

    provisional: int = 16  # an entrant with fewer matches is new: it seeds tables before anyone else
    window: float = 1.0  # the rank window's smallest half-width, in ranks
    tail: float = 1.0  # the window's tail: P(half-width ≥ x) = (window / x) ** (1 / tail)


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
) -> list[DuplicateSet]:
    """The sets to start now, numbered from ``next_number``, filling at most ``slots`` matches.

    ``field`` is every active entrant, busy or not (ranks are over the whole field). Tables are
    chosen one after the other until the slots or the free entrants run out; an empty list
    means nothing can start until a match ends."""
    names = [c.name for c in field]
    if len(set(names)) != len(names):
        raise ValueError("entrant names must be unique")
    if len(field) < 2:
        return []
    size = min(4, len(field))  # distinct entrants at a table
    per_set = len(rotations(_seating(names[:size], rng=None)))  # matches of one set
    ranks = _ranks(field, rng)
    load = {c.name: c.busy for c in field}
    sets: list[DuplicateSet] = []
    while slots >= per_set:
        free = [c for c in field if c.capacity - load[c.name] >= per_set]
        if len(free) < size:
            break
        seed_player = _seed_player(free, load, policy, rng)
        group = [seed_player.name, *_opponents(seed_player, free, ranks, size - 1, policy, rng)]
        number = next_number + len(sets)
        sets.append(DuplicateSet(number, _seating(group, rng), set_seed(arena_seed, number)))
        slots -= per_set
        for name in group:
            load[name] += per_set
    return sets


def _ranks(field: Sequence[Contender], rng: random.Random) -> dict[str, int]:
    """Each entrant's rank by μ (0 = best); equal μ (new entrants) in random order."""
    order = list(field)
    rng.shuffle(order)
    order.sort(key=lambda c: -c.mu)  # stable: the shuffle breaks ties
    return {c.name: r for r, c in enumerate(order)}


def _seed_player(free: list[Contender], load: dict[str, int], policy: Matchmaking, rng: random.Random) -> Contender:
    """The entrant a table is built around: the least played new entrant, else drawn by σ."""
    played = {c.name: c.matches + load[c.name] for c in free}  # in flight counts: it will be rated
    pool = [c for c in free if played[c.name] < policy.provisional]
    if pool:
        least = min(played[c.name] for c in pool)
        pool = [c for c in pool if played[c.name] == least]
    else:
        pool = free
    return rng.choices(pool, weights=[max(c.sigma, 1e-9) for c in pool])[0]


def _opponents(
    seed_player: Contender,
    free: list[Contender],
    ranks: dict[str, int],
    count: int,
    policy: Matchmaking,
    rng: random.Random,
) -> list[str]:
    """``count`` opponents drawn evenly from a heavy-tailed rank window around the seed player
    (widened to the nearest free entrants when too few are inside)."""
    half_width = policy.window / (1.0 - rng.random()) ** policy.tail
    home = ranks[seed_player.name]
    others = [c.name for c in free if c.name != seed_player.name]
    rng.shuffle(others)  # entrants as near as each other in random order
    others.sort(key=lambda name: abs(ranks[name] - home))
    inside = [name for name in others if abs(ranks[name] - home) <= half_width]
    if len(inside) < count:
        inside = others[:count]
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
    tables = round_tables("duplicate", group, 0, 0)
    return next(t for t in tables if t[0] == group[0])
