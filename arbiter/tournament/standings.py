"""The standings as data: each entrant's :class:`~arbiter.model.Tally` brought up to date by each
recorded match and each rated game, never recomputed from the history.

The recorder (arbiter.tournament.loop) keeps the tallies of a run and writes those a match
changes in the transaction that records it (the ``standings`` table); pages, the API and
``arbiter standings`` read them back as they are. A replay of the whole history
(:func:`replay_tallies`) is the repair tool: ``arbiter standings --rebuild``, and a run's start
when the table is missing or behind. It applies the very same steps in schedule order, so it
ends where the matches recorded one by one ended (floats to rounding: a mean kept one value at a
time sums in another order).

What a match adds: faults, forfeits and when it was played; a complete match, each entrant's
score (the mean of its seats') and, from its deals, the per-contract deal scores and the doubling
record. What a rated game adds: μ, σ, the game count, a trend point, the sums its margin rating is
solved from (:class:`~arbiter.model.MarginSums`: a few numbers per entrant it met, never the
sets themselves) and, in a duplicate format, the score less the others' mean on the same cards.
"""

from __future__ import annotations

import bisect
from collections import ChainMap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from fractions import Fraction

import trueskill

from arbiter.model import PROVISIONAL_MATCHES, DealSummary, MatchRecord, RatingRow, ScheduledMatch, StandingsMark, Tally
from arbiter.stats import Moments
from arbiter.tournament.margins import solve
from arbiter.tournament.ratings import (
    MU,
    SIGMA,
    GameOutcome,
    RatingBook,
    Standing,
    game_outcome,
    ranked,
    with_margins,
)

__all__ = ["TREND_POINTS", "Keeper", "Step", "book_of", "fresh", "game_step", "match_step", "standing_of", "table_of"]

TREND_POINTS = 40  # μ points kept per entrant for its trend line


def fresh(entrant: str) -> Tally:
    return Tally(entrant, MU, SIGMA)


def match_step(
    tallies: Mapping[str, Tally],
    record: MatchRecord,
    when: datetime | None,
    deals: Sequence[DealSummary] = (),
    double_scoring: str = "",
) -> dict[str, Tally]:
    """The tallies of ``record``'s entrants once it is counted (the others are unchanged)."""
    out: dict[str, Tally] = {}

    def get(e: str) -> Tally:
        return out.get(e) or tallies.get(e) or fresh(e)

    when = _utc(when)
    for s in record.seats:
        t = get(s.entrant)
        last = t.last_played if when is None or (t.last_played is not None and t.last_played > when) else when
        out[s.entrant] = replace(t, faults=t.faults + s.faults, last_played=last)
    for e in sorted(record.forfeited()):
        out[e] = replace(get(e), forfeits=get(e).forfeits + 1)
    if record.status != "complete":
        return out
    for e, score in record.scores().items():
        out[e] = replace(get(e), score=get(e).score.add(float(score)))
    if deals:
        seats = [s.entrant for s in record.seats]
        for e in dict.fromkeys(seats):
            out[e] = _deals_step(get(e), e, seats, deals, double_scoring)
    return out


def _deals_step(t: Tally, entrant: str, seats: Sequence[str], deals: Sequence[DealSummary], scoring: str) -> Tally:
    """Its per-contract deal scores and doubling record after one match's deals (as the report's
    :class:`arbiter.web.report.stats.Analysis` sums them)."""
    from barbu.rules.scoring import MULTIPLIERS

    own = [s for s, name in enumerate(seats) if name == entrant]
    contracts = dict(t.contracts)
    d = t.doubling
    for deal in deals:
        score = sum(deal.scores[s] for s in own) / len(own)
        contracts[deal.contract] = contracts.get(deal.contract, Moments()).add(score)
        for i, j, level, by, redo in deal.pairs:
            if seats[i] == seats[j]:
                continue  # an entrant's copies doubling each other: nothing won or lost
            for me, other in ((i, j), (j, i)):
                if seats[me] != entrant:
                    continue
                gain = MULTIPLIERS[scoring][level] * (deal.raw[me] - deal.raw[other])
                if me in (by, redo):
                    d = replace(
                        d,
                        doubles=d.doubles + (by == me),
                        redoubles=d.redoubles + (redo == me),
                        won=d.won + (gain > 0),
                        lost=d.lost + (gain < 0),
                        net=d.net + gain,
                        acted=d.acted.add(gain),
                    )
                else:
                    d = replace(d, passive=d.passive.add(gain))
    return replace(t, analysed=t.analysed + 1, contracts=contracts, doubling=d)


def game_step(
    tallies: Mapping[str, Tally], outcome: GameOutcome, rated: Mapping[str, trueskill.Rating], duplicate: bool
) -> dict[str, Tally]:
    """The tallies of a rated game's entrants once it is applied (``rated``: their new ratings)."""
    out: dict[str, Tally] = {}
    if len(outcome.scores) < 2:
        return out
    scores = {e: float(score) for e, score in outcome.scores.items()}
    for e, r in rated.items():
        t = tallies.get(e) or fresh(e)
        out[e] = replace(
            t,
            mu=r.mu,
            sigma=r.sigma,
            games=t.games + 1,
            trend=(*t.trend, r.mu)[-TREND_POINTS:],
            margin=t.margin.add(e, scores),
        )
    if duplicate:
        for e, score in outcome.scores.items():
            others = [s for o, s in outcome.scores.items() if o != e]
            diff = float(score - sum(others, Fraction(0)) / len(others))
            t = out.get(e) or tallies.get(e) or fresh(e)
            out[e] = replace(t, duplicate=t.duplicate.add(diff))
    return out


def book_of(entrants: Iterable[str], tallies: Mapping[str, Tally]) -> RatingBook:
    """The rating book the tallies hold (an entrant without one at the prior)."""
    book = RatingBook(entrants)
    for e, t in tallies.items():
        book.ratings[e] = trueskill.Rating(t.mu, t.sigma)
        book.games[e] = t.games
    return book


def standing_of(t: Tally) -> Standing:
    mean, ci = t.score.mean_ci()
    row = Standing(t.entrant, t.mu, t.sigma, t.score.n, mean, ci, t.faults, t.forfeits, t.games)
    row.duplicate_diff, row.duplicate_ci95 = t.duplicate.mean_ci()
    return row


def table_of(
    entrants: Sequence[str],
    tallies: Mapping[str, Tally],
    rating: str = "trueskill",
    provisional: int = PROVISIONAL_MATCHES,
) -> list[Standing]:
    """The standings table of ``entrants`` (an entrant without a tally at the prior), ordered by
    ``rating`` (:func:`~arbiter.tournament.ratings.ranked`); the margin ratings solved from the
    kept sums of the whole field (every tally), once per call."""
    rows = [standing_of(tallies.get(e) or fresh(e)) for e in dict.fromkeys(entrants)]
    everyone = list(dict.fromkeys([*tallies, *entrants]))
    with_margins(rows, solve(everyone, {e: t.margin for e, t in tallies.items()}))
    return ranked(rows, rating, provisional)


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


@dataclass
class Step:
    """What recording one match does to the standings, before it is committed: the rating book
    and the index of the first game not rated after it, the rating history rows of the games it
    completes, the tallies it changes."""

    book: RatingBook
    next: int
    rows: list[RatingRow] = field(default_factory=list)
    changed: dict[str, Tally] = field(default_factory=dict)


class Keeper:
    """A tournament's standings as a run keeps them: TrueSkill applied game by game in schedule
    order as far as the games are complete (a resumed run ends exactly where an uninterrupted
    one would), and every entrant's tally. Its cost per match is flat in the history: the games
    are indexed once, as the schedule is given or grows."""

    def __init__(self, entrants: Iterable[str], *, duplicate: bool, double_scoring: str):
        self.duplicate, self.double_scoring = duplicate, double_scoring
        self.order: list[int] = []  # game numbers in schedule order
        self.members: dict[int, list[int]] = {}  # a game's match numbers
        self.scheduled = 0  # matches of the schedule indexed so far
        self.next = 0  # index in self.order of the first game not yet rated
        self.book = RatingBook(entrants)
        self.tallies: dict[str, Tally] = {}

    def schedule(self, schedule: Sequence[ScheduledMatch], entrants: Iterable[str] = ()) -> None:
        """Index the matches the schedule added since the last call (a schedule only grows at
        its end) and rate ``entrants`` too (a growing field starts at the prior)."""
        for m in schedule[self.scheduled :]:
            if m.game not in self.members:
                self.members[m.game] = []
                if self.order and m.game < self.order[-1]:
                    bisect.insort(self.order, m.game)
                else:
                    self.order.append(m.game)
            self.members[m.game].append(m.number)
        self.scheduled = len(schedule)
        self.book = self.book.including(entrants)

    def advance(
        self,
        records: Mapping[int, MatchRecord],
        record: MatchRecord | None = None,
        when: datetime | None = None,
        deals: Sequence[DealSummary] = (),
    ) -> Step:
        """What counting ``record`` (if any) and rating every newly complete game does."""
        changed = match_step(self.tallies, record, when, deals, self.double_scoring) if record is not None else {}
        step = Step(self.book.copy(), self.next, [], changed)
        while step.next < len(self.order):
            numbers = self.members[self.order[step.next]]
            if not all(n in records for n in numbers):
                break
            outcome = game_outcome([records[n] for n in numbers])
            if outcome is not None:
                rated = step.book.rate(outcome)
                for name, r in sorted(rated.items()):
                    step.rows.append(RatingRow(outcome.game, outcome.last_match, name, r.mu, r.sigma))
                changed.update(game_step(ChainMap(changed, self.tallies), outcome, rated, self.duplicate))
            step.next += 1
        return step

    def adopt(self, step: Step) -> None:
        self.book, self.next = step.book, step.next
        self.tallies.update(step.changed)

    def complete_games(self, records: Mapping[int, MatchRecord]) -> int:
        """The index of the first game not complete in ``records``: where a kept mark must point."""
        for i, game in enumerate(self.order):
            if not all(n in records for n in self.members[game]):
                return i
        return len(self.order)

    def mark(self, matches: int, next: int | None = None) -> StandingsMark:
        """How far the kept standings go, once ``matches`` are recorded (``next``: the first game
        not rated, by its index; the kept one by default)."""
        index = self.next if next is None else next
        if index < len(self.order):
            return StandingsMark(matches, self.order[index])
        return StandingsMark(matches, self.order[-1] + 1 if self.order else 0)

    def resume(self, tallies: Mapping[str, Tally], mark: StandingsMark) -> None:
        """Take up the standings as stored: the tallies and the first game not rated."""
        self.tallies = dict(tallies)
        self.book = book_of(self.book.ratings, self.tallies)
        self.next = bisect.bisect_left(self.order, mark.next_game)

    def replay(
        self,
        records: Mapping[int, MatchRecord],
        when: Mapping[int, datetime | None],
        deals: Mapping[int, Sequence[DealSummary]],
    ) -> Step:
        """The standings from nothing, every recorded match in schedule order (the repair tool)."""
        self.tallies, self.next = {}, 0
        self.book = RatingBook(self.book.ratings)
        for n in sorted(records):
            self.tallies.update(
                match_step(self.tallies, records[n], when.get(n), deals.get(n, ()), self.double_scoring)
            )
        step = self.advance(records)
        step.changed = dict(self.tallies) | step.changed
        self.adopt(step)
        return step
