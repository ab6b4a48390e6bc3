"""The referee: plays one match between four players by the rules, whatever they do.

It deals (from a seed or given hands), asks the seat to act for each decision with that seat's
view only, checks the answer with the engine, enforces the time control, applies the fault
policy, and writes every move to the match log.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from barbu.matchlog import MatchLogWriter, MatchResult, MatchStatus, dumps
from barbu.rules import (
    Action,
    IllegalActionError,
    MatchState,
    Phase,
    Ruleset,
    card_name,
    new_match,
    observe,
    shuffle_hands,
)
from barbu.rules.scoring import places

from arbiter.errors import ArbiterError
from arbiter.referee.faults import FaultKind, FaultPolicy, FaultRecord, PlayerFault
from arbiter.referee.players import Player, RandomPlayer
from arbiter.referee.stall import StallWatch
from arbiter.referee.timecontrol import SeatClock, TimeControl

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatchSetup:
    rules: Ruleset
    seed: int = 0
    first_declarer: int = 0
    match_id: str | None = None
    # Fixed deals (4 hand masks each) instead of shuffling from the seed; for duplicate play.
    deals: Sequence[Sequence[int]] | None = None
    auto_single: bool = True  # decide single-choice decisions without asking the bot


class Referee:
    def __init__(
        self,
        setup: MatchSetup,
        players: Sequence[Player],
        emit: Callable[[str], None],
        *,
        seats: list[dict[str, object]] | None = None,
        time_control: TimeControl = TimeControl(),
        fault_policy: FaultPolicy = FaultPolicy(),
        clock: Callable[[], float] = time.perf_counter,
        log_times: bool = True,
        header: dict[str, object] | None = None,
        stalls: StallWatch | None = None,
    ):
        """``log_times=False`` leaves the ``ms`` keys out of the log, so that a match between
        deterministic in-process players writes the same bytes every time. ``header``: keys
        added to the log's ``match`` line. ``stalls``: the event loop's :class:`StallWatch`;
        time the arbiter was stalled during a decision is not charged to the seat."""
        if len(players) != 4:
            raise ValueError("a match needs exactly 4 players")
        self.setup = setup
        self.players = list(players)
        self.time_control = time_control
        self.policy = fault_policy
        self.clock = clock
        self.log_times = log_times
        self.stalls = stalls
        self.state: MatchState = new_match(setup.rules, setup.first_declarer)
        seats = seats or [{"seat": s, "entrant": p.name} for s, p in enumerate(players)]
        self.writer = _BufferedWriter(
            emit,
            rules=setup.rules,
            first_declarer=setup.first_declarer,
            seats=seats,
            match_id=setup.match_id,
            seed=setup.seed if setup.deals is None else None,
            extra=header,
        )
        self.clocks = [SeatClock(time_control) for _ in range(4)]
        self.strikes = [0, 0, 0, 0]
        self.fallbacks = [RandomPlayer(seed=f"{setup.seed}/fallback/{s}", name="fallback") for s in range(4)]
        self.taken_over = [False] * 4
        self.status = MatchStatus.COMPLETE  # what the result will say
        self.reason: str | None = None
        self.faults: list[FaultRecord] = []
        self.forfeits: list[int] = []
        self.decisions = 0
        self.think_seconds = [0.0] * 4
        self.stalled = 0.0  # seconds the arbiter was stalled during decisions (not charged)

    # ---- the match loop ----------------------------------------------------------------
    async def play(self) -> MatchResult:
        """Play the match in the running event loop, awaiting each player: a remote player
        waits for its bot without blocking the loop."""
        state = self.state
        rng = random.Random(self.setup.seed)
        started = self.clock()
        await self._each_player(lambda seat, p: p.start(seat, observe(state, seat)))
        try:
            while state.phase is not Phase.OVER:
                if self.clock() - started - self.stalled > self.time_control.match_limit:
                    self._abort(f"watchdog: the match exceeded {self.time_control.match_limit:g}s of wall time")
                    break
                if state.phase is Phase.DEAL:
                    self._deal(rng)
                    continue
                await self._decision()
                if state.phase in (Phase.DEAL, Phase.OVER):
                    await self._each_player(lambda seat, p: p.deal_ended(state, seat), in_turn=True)
        except ArbiterError:
            raise  # the arbiter's own failure (its log cannot be written): the match cannot count
        except Exception as e:  # an arbiter bug must still leave a readable, closed log
            log.exception("match aborted by an internal error")
            self._abort(f"internal error: {e}")
        finally:
            await self._each_player(lambda seat, p: p.match_ended(observe(state, seat)))
            try:
                self.writer.flush()
            finally:
                for p in self.players:
                    try:
                        await p.close()
                    except Exception:
                        log.exception("closing player %s failed", p.name)
        return MatchResult(
            status=self.status,
            totals=tuple(state.totals),
            places=tuple(places(state.totals)),
            faults=tuple(self.faults),
            forfeits=tuple(self.forfeits),
            deals=len(state.results),
            decisions=self.decisions,
            think_seconds=tuple(self.think_seconds),
            reason=self.reason,
        )

    def _deal(self, rng: random.Random) -> None:
        state = self.state
        if self.setup.deals is not None:
            state.deal(self.setup.deals[state.deal_index])
        else:
            state.deal(shuffle_hands(rng))
        self.writer.dealt(state)

    async def _decision(self) -> None:
        state = self.state
        seat = state.turn
        legal = state.legal_actions()
        if self.setup.auto_single and len(legal) == 1:
            state.apply(legal[0])
            self.writer.acted(state, seat, legal[0], auto=True)
            return
        if self.taken_over[seat]:
            action = self.fallbacks[seat].choose(observe(state, seat))
            state.apply(action)
            self.writer.acted(state, seat, action, auto=True)
            return
        action, elapsed, stalled, fault = await self._ask(seat)
        if fault is None:
            try:
                state.apply(action)
            except IllegalActionError as e:
                fault = PlayerFault(FaultKind.ILLEGAL, f"{_describe(action)}: {e}")
            else:
                self.writer.acted(state, seat, action, ms=self._ms(elapsed))
                self._note_stall(stalled)
                return
        action = self._substitute(seat, fault)
        state.apply(action)
        self.writer.acted(state, seat, action, ms=self._ms(elapsed), auto=True)
        self._note_stall(stalled)

    def _note_stall(self, stalled: float) -> None:
        """Say on the decision's line that the arbiter was stalled while it waited."""
        if stalled > 0:
            self.writer.annotate(stalled_ms=round(stalled * 1000, 3))

    def _flush_log(self) -> None:
        """Write the log lines made so far. Called once the next request has gone out: the bot
        thinks while the arbiter encodes and writes them."""
        self.writer.flush()

    def _ms(self, seconds: float) -> float | None:
        return seconds * 1000 if self.log_times else None

    async def _ask(self, seat: int) -> tuple[Action, float, float, PlayerFault | None]:
        """The seat's answer, the time it took (the arbiter's stalls left out), how long the
        arbiter was stalled meanwhile, and the fault if it did not answer well."""
        clock = self.clocks[seat]
        self.decisions += 1
        start = self.clock()
        mark = StallWatch.now()
        try:
            action = await self.players[seat].decide(self.state, seat, clock.limit, self._flush_log)
            fault = None
        except PlayerFault as f:
            action, fault = None, f
        except ArbiterError:
            raise  # the arbiter's own (its log, written while the bot thinks): never the seat's
        except Exception as e:  # an in-process player's bug
            action, fault = None, PlayerFault(FaultKind.CRASH, f"{type(e).__name__}: {e}")
        stalled = self.stalls.since(mark) if self.stalls is not None else 0.0
        self.stalled += stalled
        elapsed = max(0.0, self.clock() - start - stalled)
        self.think_seconds[seat] += elapsed
        if not clock.charge(elapsed) and (fault is None or fault.kind is not FaultKind.TIMEOUT):
            limit = self.time_control.per_decision
            fault = PlayerFault(FaultKind.TIMEOUT, f"took {elapsed:.3f}s; limit {limit:g}s and the reserve is spent")
        return action, elapsed, stalled, fault

    def _substitute(self, seat: int, fault: PlayerFault) -> Action:
        """Record the fault, decide what follows, and return the fallback's move."""
        self.strikes[seat] += 1
        terminal = fault.fatal or self.strikes[seat] >= self.policy.max_strikes
        outcome = "forfeit" if terminal else "substituted"
        record = FaultRecord(self.state.deal_index, seat, fault.kind, fault.detail, outcome)
        self.faults.append(record)
        self.writer.fault(record.deal, seat, record.kind.value, record.detail, outcome)
        log.warning("seat %d (%s): %s: %s -> %s", seat, self.players[seat].name, fault.kind, fault.detail, outcome)
        if terminal and not self.taken_over[seat]:
            self.taken_over[seat] = True
            self.forfeits.append(seat)
        return self.fallbacks[seat].choose(observe(self.state, seat))

    def _abort(self, reason: str) -> None:
        self.status, self.reason = MatchStatus.ABORTED, reason
        self.writer.aborted(self.state, reason)

    async def _each_player(self, call: Callable[[int, Player], Awaitable[None]], *, in_turn: bool = False) -> None:
        """Notify every seat still played by its bot; a failure here is the bot's fault. The
        notifications go out at once (each waits for its own stream), or ``in_turn`` when none
        of them waits (a deal's end: a task per seat would cost more than the notification);
        their failures are recorded in seat order."""
        seats = [(seat, p) for seat, p in enumerate(self.players) if not self.taken_over[seat]]
        if in_turn:
            outcomes = [await _outcome(call(seat, p)) for seat, p in seats]
        else:
            outcomes = await asyncio.gather(*(call(seat, p) for seat, p in seats), return_exceptions=True)
        for (seat, _), outcome in zip(seats, outcomes, strict=True):
            if isinstance(outcome, PlayerFault):
                self._record_silent_fault(seat, outcome)
            elif isinstance(outcome, ArbiterError):
                raise outcome
            elif isinstance(outcome, Exception):
                self._record_silent_fault(seat, PlayerFault(FaultKind.CRASH, f"{type(outcome).__name__}: {outcome}"))
            elif outcome is not None:
                raise outcome  # cancelled, interrupted: not the bot's doing

    def _record_silent_fault(self, seat: int, fault: PlayerFault) -> None:
        """A fault outside a decision (e.g. the bot died between deals): take the seat over.

        Once the log has ended (the match is over) there is nothing left to protect.
        """
        if self.writer.ended:
            return
        self.strikes[seat] = self.policy.max_strikes
        record = FaultRecord(self.state.deal_index, seat, fault.kind, fault.detail, "forfeit")
        self.faults.append(record)
        self.writer.fault(record.deal, seat, record.kind.value, record.detail, "forfeit")
        if not self.taken_over[seat]:
            self.taken_over[seat] = True
            self.forfeits.append(seat)


class _BufferedWriter(MatchLogWriter):
    """The match log writer, with each line made at once (from the state of that moment) but
    encoded and written on :meth:`flush`: the referee flushes once a request has gone out, so
    the JSON is written while the bot thinks, not between its reply and the next request."""

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        rules: Ruleset,
        first_declarer: int,
        seats: list[dict[str, object]],
        match_id: str | None,
        seed: int | None,
        extra: dict[str, object] | None,
    ):
        self._buffer: list[dict[str, object]] = []
        super().__init__(
            emit, rules=rules, first_declarer=first_declarer, seats=seats, match_id=match_id, seed=seed, extra=extra
        )

    def _line(self, obj: dict[str, object]) -> None:
        self._buffer.append(obj)

    def annotate(self, **keys: object) -> None:
        """Add keys to the last line made (the log's readers ignore keys they do not know)."""
        self._buffer[-1].update(keys)

    def flush(self) -> None:
        if self._buffer:
            buffer, self._buffer = self._buffer, []
            for obj in buffer:
                self._emit(dumps(obj))


async def _outcome(notification: Awaitable[None]) -> BaseException | None:
    """What ``asyncio.gather(..., return_exceptions=True)`` gives for one notification (our own
    cancellation still propagates)."""
    try:
        await notification
    except Exception as e:
        return e
    return None


def _describe(action: Action) -> str:
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < 52:
        return card_name(action)
    return repr(action)
