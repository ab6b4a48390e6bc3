"""The referee's view of a player: anything that can answer a decision request.

The referee never knows whether a player is a bot process, a remote client, or an in-process
strategy; tests drive it with in-process players.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any, Callable

from barbu.rules import MatchState, View, observe


def run_unawaited(coro: Any, refusal: str) -> Any:
    """Run a coroutine that never waits to its end, without an event loop (in-process players
    answer at once); one that does wait is closed and refused with ``refusal``."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError(refusal)


class Player(ABC):
    """A player has two faces. The blocking one (``start``, ``decide``, ``deal_ended``,
    ``match_ended``, ``close``) is what an in-process player implements and what
    :meth:`Referee.run <arbiter.referee.loop.Referee.run>` calls. The asynchronous one (``astart``,
    ``ask``, ``adeal_ended``, ``amatch_ended``, ``aclose``) is what :meth:`Referee.arun` awaits;
    by default it calls the blocking one (and never waits), so in-process players work in both.
    A player behind a network stream implements the asynchronous face natively."""

    name: str = "player"

    def start(self, seat: int, view: View) -> None:
        """The match begins; ``view`` is the seat's view before the first deal."""

    @abstractmethod
    def decide(self, view: View, time_limit: float) -> Any:
        """An action among ``view.legal``; may raise PlayerFault."""

    def deal_ended(self, view: View) -> None:
        """A deal has been scored; ``view.results[-1]`` is its result."""

    def match_ended(self, view: View) -> None:
        """The match is over (complete or aborted)."""

    def close(self) -> None:
        """Release whatever the player holds (processes, streams)."""

    # -- the asynchronous face (Referee.arun)
    async def astart(self, seat: int, view: View) -> None:
        self.start(seat, view)

    async def ask(self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None) -> Any:
        """The seat's action in ``state`` (its turn): by default ``decide`` on the seat's view.
        A player may encode the request from the state without building the view (the state
        is the referee's: read it, never change it). ``sent``, if given, is called once the
        request has gone out (the referee then does its bookkeeping while the bot thinks)."""
        if sent is not None:
            sent()
        return self.decide(observe(state, seat), time_limit)

    async def adeal_ended(self, view: View) -> None:
        self.deal_ended(view)

    async def deal_end(self, state: MatchState, seat: int) -> None:
        """A deal of ``state`` has been scored: by default ``adeal_ended`` with the seat's view
        (a player may encode its message from the state, as with ``ask``)."""
        await self.adeal_ended(observe(state, seat))

    async def amatch_ended(self, view: View) -> None:
        self.match_ended(view)

    async def aclose(self) -> None:
        self.close()


class RandomPlayer(Player):
    """Uniformly random legal play; also the fallback for a faulty seat."""

    def __init__(self, seed: Any = None, name: str = "random"):
        self.rng = random.Random(seed)
        self.name = name

    def decide(self, view: View, time_limit: float) -> Any:
        return self.rng.choice(view.legal)


class StrategyPlayer(Player):
    """An in-process strategy: a function from a view to an action."""

    def __init__(self, choose: Callable[[View], Any], name: str):
        self.choose = choose
        self.name = name

    def decide(self, view: View, time_limit: float) -> Any:
        return self.choose(view)
