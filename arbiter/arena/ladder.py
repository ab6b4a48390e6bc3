"""The standing ladder as a schedule of the one tournament loop (arbiter.tournament.loop).

:class:`ArenaSchedule` never runs out: whenever the loop has room it asks matchmaking
(arbiter.arena.matchmaking) for the next duplicate sets among the entrants active *now* (the
house's and the submitted versions that passed their check), and when nothing can be played it
waits for the field to change. Each set's rotations are consecutive matches rated as one game,
exactly as a duplicate tournament's, so the recorder, the ratings, the logs and the resume are
the tournament's own. Every entrant is a version, ``NAME@VERSION``: a new version starts from the
prior and the old one keeps its history.

A restarted arena takes up what the database holds: the sets it recorded, and the rotations of a
set a stop cut short, which it plays first (a set is rated once all its rotations are in).
``drain`` ends it: no set starts any more, and the loop ends when the matches in play end.

A disk short of space pauses the ladder (arbiter.arena.disk): no match starts while it lasts; a
match whose log or row could not be written for want of space is held, not lost, and played (or
recorded from its log) again once the disk has room; an arena never stops for a full disk.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arbiter.arena.disk import DiskWatch, disk_full
from arbiter.arena.matchmaking import Contender, Matchmaking, meetings, next_sets
from arbiter.errors import ConfigError
from arbiter.execution.remote import entrant_of
from arbiter.model import ScheduledMatch
from arbiter.tournament.config import EntrantConfig, TournamentConfig
from arbiter.tournament.formats import Format, register
from arbiter.tournament.loop import Run, Schedule
from arbiter.tournament.ratings import ENV
from arbiter.tournament.schedule import rotations

if TYPE_CHECKING:
    from arbiter.storage.models import Match

__all__ = ["ArenaSchedule", "LadderEntrant", "LOCAL_CAPACITY", "versioned"]

FORMAT = register(
    Format("arena", r"\d+|a\d+-\d+", True, lambda entrants, rounds: 0, lambda *schedule: [], growing=True)
)
"""The ladder's format: duplicate sets chosen as it goes. A match is keyed by its one identifier,
its place in the ladder from 1 (``46``: the log ``ARENA-46.jsonl``, the page ``/matches/46``);
arenas of earlier releases keyed theirs ``a12-3`` (set 12, rotation 3)."""

LOCAL_CAPACITY = 256  # matches at once of a bot this arbiter starts itself: the slots bound it first
POLL_SECONDS = 1.0  # how often a waiting ladder looks at its field again
SET_ROTATIONS = 4  # matches of a set of 4 distinct entrants


def versioned(name: str, version: int) -> str:
    """A version's name on the ladder: ``alice@2`` (an entrant name never holds ``@``)."""
    return f"{name}@{version}"


@dataclass(frozen=True)
class LadderEntrant:
    """An active version: how to start it (its name is ``NAME@VERSION``) and how many matches it
    may play at once."""

    entrant: EntrantConfig
    capacity: int = LOCAL_CAPACITY


class ArenaSchedule(Schedule):
    """The ladder's matches, chosen as the loop has room (see the module's docstring).

    ``field`` gives the active versions now; ``lookup`` any version by name (a stopped set's
    rotations may need one retired since); ``disk`` whether the arena is short of disk space.
    The arena's recorded matches come when the loop has read them (:meth:`take_up`)."""

    poll_seconds = POLL_SECONDS

    def __init__(
        self,
        tournament: TournamentConfig,
        policy: Matchmaking,
        seed: int,
        field: Callable[[], Sequence[LadderEntrant]],
        lookup: Callable[[str], EntrantConfig | None],
        disk: DiskWatch | None = None,
    ):
        self.policy = policy
        self.disk = disk
        self.arena_seed = seed
        self.field = field
        self.lookup = lookup
        self.changed = threading.Event()  # the field changed: a waiting ladder looks again at once
        self.draining = threading.Event()
        self.rng = random.Random(seed)
        self.played: Counter[str] = Counter()  # recorded matches per version, as counted so far
        self.met: Counter[frozenset[str]] = Counter()  # sets each pair of versions has shared (scheduled)
        self._counted = False  # the records the run began with counted
        self._pending: dict[int, ScheduledMatch] = {}  # scheduled, not counted as recorded yet
        self.config = replace(tournament, format=FORMAT.name, entrants=(), rounds=0)
        self._adopt([e.entrant.name for e in field()])  # the remote ones among them open the lobby
        self.matches: list[ScheduledMatch] = []
        self.next_set = 0

    def build(self) -> list[ScheduledMatch]:
        return []  # built from the stored rows (``_taken_up``) and grown by matchmaking

    def resume(self, stored_rounds: int | None, stored_format: str | None) -> None:
        if stored_format is not None and stored_format != FORMAT.name:
            raise ConfigError(
                f"the database holds a tournament named {self.config.name!r} that is not an arena: "
                "give the arena another name or use another database"
            )

    def take_up(self, stored: Sequence[Match]) -> None:
        self.matches = self._taken_up(stored)
        self.met = Counter(pair for m in self.matches if m.rotation == 0 for pair in meetings(m.seats))
        self._pending = {m.number: m for m in self.matches}
        self.next_set = max((m.game for m in self.matches), default=-1) + 1

    def drain(self) -> None:
        """No set starts any more; the run ends when the matches in play have ended."""
        self.draining.set()
        self.changed.set()

    # ---- taking up what is recorded ----------------------------------------------------------
    def _taken_up(self, stored: Sequence[Match]) -> list[ScheduledMatch]:
        """The recorded matches as the schedule's first ones, plus the missing rotations of each
        set a stop cut short (played again first: until they are in, the set is not rated)."""
        matches: dict[int, ScheduledMatch] = {}
        by_set: dict[int, list[ScheduledMatch]] = {}
        for row in stored:
            m = ScheduledMatch(
                number=row.number,
                key=row.key,
                round=row.round,
                table=row.table_no,
                rotation=row.rotation,
                game=row.game,
                seats=(row.seats[0], row.seats[1], row.seats[2], row.seats[3]),
                seed=row.seed,
                deal_block=0,
            )
            matches[m.number] = m
            by_set.setdefault(m.game, []).append(m)
        for sets in by_set.values():
            first = sets[0]
            seating = tuple(first.seats[(s + first.rotation) % 4] for s in range(4))
            base = first.number - first.rotation
            recorded = {m.rotation for m in sets}
            for rotation, seats in enumerate(rotations(seating)):
                if rotation not in recorded:
                    number = base + rotation
                    matches[number] = _match(first.game, rotation, number, seats, first.seed)
        entrants = {name for m in matches.values() for name in m.seats}
        self._adopt(sorted(entrants))
        return [matches[n] for n in sorted(matches)]

    def _adopt(self, names: Sequence[str]) -> None:
        """Make the config know how to start each of ``names`` (the loop makes tasks from it)."""
        known = {e.name for e in self.config.entrants}
        added = []
        for name in names:
            if name in known:
                continue
            entrant = self.lookup(name)
            if entrant is None:
                raise ConfigError(
                    f"the arena's set of {name!r} is not finished, but {name!r} is neither in the arena file nor "
                    "among the submitted versions: put it back in the arena file to finish its set"
                )
            added.append(entrant)
        if added:
            self.config = replace(self.config, entrants=(*self.config.entrants, *added))

    # ---- growing ------------------------------------------------------------------------------
    def grow(self, run: Run) -> list[ScheduledMatch]:
        if self.draining.is_set():
            return []
        self._count(run)
        in_play = Counter(name for m in self._pending.values() for name in m.seats)
        # The loop's window (two matches a worker) and room for one whole set more.
        slots = 2 * max(1, run.workers) + 4 - len(self._pending)
        field = self._present(run)
        if slots <= 0 or len(field) < 2:
            return []
        self._adopt(list(field))
        book = run.ratings
        contenders = []
        for name, e in field.items():
            rating = book.ratings.get(name) if book is not None else None
            rating = rating or ENV.create_rating()
            contenders.append(Contender(name, rating.mu, rating.sigma, self.played[name], e.capacity, in_play[name]))
        sets = next_sets(
            contenders,
            slots,
            self.rng,
            arena_seed=self.arena_seed,
            next_number=self.next_set,
            policy=self.policy,
            met=self.met,
        )
        new: list[ScheduledMatch] = []
        for s in sets:
            seating = _fitted(s.seating, field)
            if seating is None:
                continue  # a remote entrant in more seats than it plays at once: never mind this set
            s = replace(s, seating=seating)
            self.met.update(meetings(seating))
            for rotation, seats in enumerate(s.seatings()):
                new.append(_match(s.number, rotation, len(self.matches) + len(new), seats, s.seed))
            self.next_set = s.number + 1
        self.matches.extend(new)
        self._pending.update((m.number, m) for m in new)
        self.config = replace(self.config, rounds=self.next_set)
        return new

    def _present(self, run: Run) -> dict[str, LadderEntrant]:
        """The active versions that can play now: a remote one only while it is connected to the
        lobby, with the capacity it declared there."""
        connected = run.connected()
        present = {}
        for e in self.field():
            if e.entrant.remote:
                capacity = connected.get(entrant_of(e.entrant.name), 0)
                if not capacity:
                    continue
                # Matchmaking counts a set's rotations against capacity; a remote entrant may play
                # them one after the other (the lobby queues them), so each unit it declared
                # admits a whole set.
                e = replace(e, capacity=capacity * SET_ROTATIONS)
            present[e.entrant.name] = e
        return present

    def _count(self, run: Run) -> None:
        """Add the matches recorded since the last count to ``played``: the run's records once,
        then the scheduled matches recorded since (a cost flat in the history)."""
        if not self._counted:
            counted = list(run.records.values())
            self._counted = True
        else:
            counted = [run.records[n] for n in self._pending if n in run.records]
        for record in counted:
            self._pending.pop(record.number, None)
            for seat in record.seats:
                self.played[seat.entrant] += 1

    def paused(self, run: Run) -> bool:
        return self.disk is not None and self.disk.paused() is not None

    def hold(self, run: Run, error: Exception) -> bool:
        """A match (or the ladder's growth) that a full disk kept from being written: held, and
        the ladder paused until the disk has room (any other error ends the run)."""
        if self.disk is None or not disk_full(error):
            return False
        self.disk.failed(error)
        return True

    def over(self, run: Run) -> bool:
        """A drained arena is served again after its restart: its bridges wait for it."""
        return False

    def wait_for_more(self, run: Run) -> bool:
        if self.draining.is_set():
            return False
        self.changed.wait(POLL_SECONDS)
        self.changed.clear()
        return not self.draining.is_set()


def _fitted(seating: tuple[str, ...], field: dict[str, LadderEntrant]) -> tuple[str, ...] | None:
    """The table with each remote entrant in no more seats than it can play at once (one match
    per unit of the capacity it declared): a copied remote entrant trades places with a local
    one seated once; None if that cannot be done."""

    def too_many(name: str, copies: int) -> bool:
        e = field[name]
        return e.entrant.remote and copies * SET_ROTATIONS > e.capacity

    copies = Counter(seating)
    for name, n in copies.items():
        if not too_many(name, n):
            continue
        swap = next((o for o, k in copies.items() if k == 1 and not too_many(o, n)), None)
        if swap is None:
            return None
        return _fitted(tuple(swap if x == name else name if x == swap else x for x in seating), field)
    return seating


def _match(number_of_set: int, rotation: int, number: int, seats: Sequence[str], seed: int) -> ScheduledMatch:
    seats4 = (seats[0], seats[1], seats[2], seats[3])
    key = str(number + 1)  # the match's id (arbiter.arena.service.public_id)
    return ScheduledMatch(number, key, number_of_set, 0, rotation, number_of_set, seats4, seed, 0)
