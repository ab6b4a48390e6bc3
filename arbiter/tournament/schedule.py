"""Tournament schedules: which entrants sit where in which match, deterministic from the seed.

Plain values in, plain values out; no I/O. The mechanics every format shares (tables of four,
their seat rotations, their seeds and deal blocks); each format (arbiter.tournament.formats)
says which tables a round has and whether a table's rotations are a duplicate set:

* ``round_robin``: one round is every table of four distinct entrants (all combinations), each
  table played in its distinct seat rotations (4 for four distinct entrants), each with its own
  deals. Every entrant plays the same number of matches, sits in every seat equally often and
  meets every other entrant equally often. A round plays its tables in *balanced order*
  (:func:`balanced_order`): however far it has gone, everyone has played about as many tables
  (within two, now and then three near its end) and met the others about as often, so a tournament stopped, or read, before its
  round ends has not spent its matches on a few entrants (bench/ladder.py measures how much
  sooner that orders a field than tables in a random order).
* ``gauntlet``: the challenger against every combination of three of the field, in every
  rotation: the challenger sits in every seat equally often and meets every field member
  equally often.
* ``duplicate``: the round-robin tables, but the rotations of a table replay the same deals, so
  every entrant of the table holds every hand once (a *duplicate set*, rated as one game).
* ``ab`` (``arbiter ab``, not a tournament-file format): entrants ``A, B, field…``. Round r is one
  *paired set* (:func:`paired_sets`): A with the field in its 4 seat rotations, then B in the very
  same seats against the very same field, all 8 matches on the same deals, so B − A measures the
  change alone.
* ``arena`` (``arbiter serve``, an arena file): no schedule known in advance; the arena's
  matchmaking (arbiter.arena.matchmaking) chooses duplicate sets as it goes.

With fewer than 4 entrants (or a gauntlet field of fewer than 3), copies of entrants fill the
tables: two entrants sit A B A B; three sit x y x z once for each x; one field member F sits
C F F F. Copies always keep every entrant's seats balanced.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence

from arbiter.model import ScheduledMatch

TABLE_KEY = r"r\d+-t\d{3,}-\d+"
"""The match keys of :func:`table_schedule`: round, table, rotation (``r1-t003-2``)."""
PAIRED_KEY = r"s\d+-[ab]\d+"
"""The match keys of :func:`paired_sets`: set, side and rotation (``s4-b2``)."""


def derive_seed(seed: int, *parts: object) -> int:
    text = ":".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def rotations(seating: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct seat rotations of a seating; in rotation k everyone moved k seats clockwise."""
    out: list[tuple[str, ...]] = []
    for k in range(4):
        rotated = tuple(seating[(s - k) % 4] for s in range(4))
        if rotated in out:
            break  # the seating repeats itself (A B A B has 2 rotations)
        out.append(rotated)
    return out


def _circular_orders(members: Sequence[str]) -> list[tuple[str, ...]]:
    """The 6 circular seating orders of 4 distinct members (the first one kept in place)."""
    first, rest = members[0], members[1:]
    return [(first, *p) for p in itertools.permutations(rest)]


def field_groups(entrants: Sequence[str], challenger: str | None = None) -> list[tuple[str, ...]]:
    """The tables of a round robin: every four of the field (copies fill a field under four)."""
    names = list(entrants)
    if len(names) >= 4:
        return list(itertools.combinations(names, 4))
    if len(names) == 3:
        return [(x, *[n for n in names if n != x][:1], x, *[n for n in names if n != x][1:]) for x in names]
    if len(names) == 2:
        return [(names[0], names[1], names[0], names[1])]
    raise ValueError("a tournament needs at least 2 entrants")


def gauntlet_groups(entrants: Sequence[str], challenger: str | None = None) -> list[tuple[str, ...]]:
    """The tables of a gauntlet: the challenger with every three of the field."""
    if challenger is None:
        raise ValueError("the gauntlet format needs a challenger")
    field = [n for n in entrants if n != challenger]
    if len(field) >= 3:
        return [(challenger, *c) for c in itertools.combinations(field, 3)]
    if len(field) == 2:
        a, b = field
        return [(challenger, a, b, a), (challenger, b, a, b)]
    if len(field) == 1:
        return [(challenger, field[0], field[0], field[0])]
    raise ValueError("a gauntlet needs at least one entrant besides the challenger")


def round_tables(groups: Sequence[tuple[str, ...]], round_no: int, seed: int) -> list[tuple[str, ...]]:
    """The tables (seatings before rotation) of one round, in play order."""
    tables = []
    for t, group in enumerate(groups):
        if len(set(group)) == 4:
            # Over 6 rounds a table sits in each of its 6 circular orders once (who is on whose left).
            orders = _circular_orders(group)
            offset = random.Random(f"{seed}:order:{t}").randrange(6)
            group = orders[(offset + round_no) % 6]
        tables.append(tuple(group))
    return balanced_order(tables, random.Random(f"{seed}:round:{round_no}"))


BALANCE_CANDIDATES = 16  # tables weighed at each step of balanced_order: enough for a spread of two plays


def balanced_order(tables: Sequence[tuple[str, ...]], rng: random.Random) -> list[tuple[str, ...]]:
    """``tables`` in an order whose every beginning is balanced: each next table is, of up to
    ``BALANCE_CANDIDATES`` tables (drawn at random) of the entrant that has played least so far,
    the one whose members have played least, then whose members have met least. Random ties, so
    the order depends on ``rng``. About a second for the largest round a tournament allows (29
    entrants, 23 751 tables)."""
    names = sorted({name for table in tables for name in table})
    index = {name: i for i, name in enumerate(names)}
    members = [sorted({index[name] for name in table}) for table in tables]
    pairs = [[a * len(names) + b for a, b in itertools.combinations(m, 2)] for m in members]
    waiting = _Waiting(len(names), members, rng)
    played, met = [0] * len(names), [0] * len(names) ** 2
    everyone = list(range(len(names)))
    order: list[int] = []
    while len(order) < len(tables):
        rng.shuffle(everyone)
        least = min((i for i in everyone if waiting.tables[i]), key=lambda i: played[i])
        best = min(
            waiting.tables[least][-BALANCE_CANDIDATES:],
            key=lambda t: (
                max(played[i] for i in members[t]),
                sum(played[i] for i in members[t]),
                sum(met[p] for p in pairs[t]),
            ),
        )
        waiting.remove(best)
        order.append(best)
        for i in members[best]:
            played[i] += 1
        for p in pairs[best]:
            met[p] += 1
    return [tables[t] for t in order]


class _Waiting:
    """Each entrant's tables not yet played, in random order; a played table leaves all its
    members' lists at once (swapped with the last: constant time)."""

    def __init__(self, entrants: int, members: Sequence[Sequence[int]], rng: random.Random):
        self.members = members
        self.tables: list[list[int]] = [[] for _ in range(entrants)]
        for t, m in enumerate(members):
            for i in m:
                self.tables[i].append(t)
        for mine in self.tables:
            rng.shuffle(mine)
        self.position = [{t: k for k, t in enumerate(mine)} for mine in self.tables]

    def remove(self, table: int) -> None:
        for i in self.members[table]:
            mine, where = self.tables[i], self.position[i]
            k, last = where.pop(table), mine.pop()
            if last != table:
                mine[k], where[last] = last, k


MAX_MATCHES = 100_000  # matches of one tournament: the schedule is built, held and stored whole


def paired_sets(entrants: Sequence[str], sets: int, seed: int) -> list[ScheduledMatch]:
    """The ``ab`` schedule: per set, A's 4 rotations against the field, then B's on the same deals."""
    if not 3 <= len(entrants) <= 5:
        raise ValueError("an A/B test needs A, B and a field of 1 to 3 entrants")
    a, b, *field = entrants
    others = (field * 3)[:3] if len(field) != 2 else [field[0], field[1], field[0]]
    matches: list[ScheduledMatch] = []
    for r in range(sets):
        for t, player in enumerate((a, b)):
            seating = (player, *others)
            for k in range(4):
                matches.append(
                    ScheduledMatch(
                        number=len(matches),
                        key=f"s{r + 1}-{'ab'[t]}{k + 1}",
                        round=r,
                        table=t,
                        rotation=k,
                        game=r,
                        seats=tuple(seating[(s - k) % 4] for s in range(4)),  # type: ignore[arg-type]
                        seed=derive_seed(seed, "deals", r),
                        deal_block=r,
                    )
                )
    return matches


def table_schedule(
    groups: Sequence[tuple[str, ...]], rounds: int, seed: int, *, duplicate: bool
) -> list[ScheduledMatch]:
    """Every round's tables of ``groups``, each in its seat rotations; ``duplicate``: a table's
    rotations replay the same deals and are rated as one game (a duplicate set)."""
    matches: list[ScheduledMatch] = []
    game = 0
    for r in range(rounds):
        for t, seating in enumerate(round_tables(groups, r, seed)):
            for k, seats in enumerate(rotations(seating)):
                number = len(matches)
                block = game if duplicate else number  # the rotations of a set share its deals
                matches.append(
                    ScheduledMatch(
                        number=number,
                        key=f"r{r + 1}-t{t + 1:03d}-{k + 1}",
                        round=r,
                        table=t,
                        rotation=k,
                        game=game if duplicate else number,
                        seats=seats,  # type: ignore[arg-type]
                        seed=derive_seed(seed, "deals", block),
                        deal_block=block,
                    )
                )
                if not duplicate:
                    game += 1
            if duplicate:
                game += 1
    return matches


def block_deals(deals: Sequence[Sequence[int]], block: int, per_match: int) -> list[list[int]]:
    """The deals of one block of a deal file: deal j of block b is line (b * per_match + j), cyclically."""
    return [list(deals[(block * per_match + j) % len(deals)]) for j in range(per_match)]


def games(schedule: Sequence[ScheduledMatch]) -> list[list[int]]:
    """The rated games in schedule order, each the list of its match numbers."""
    out: dict[int, list[int]] = {}
    for m in schedule:
        out.setdefault(m.game, []).append(m.number)
    return [out[g] for g in sorted(out)]
