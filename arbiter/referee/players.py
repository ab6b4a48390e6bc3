"""The referee's view of a player: anything that can answer a decision request.

The referee never knows whether a player is a bot process, a remote client, or an in-process
strategy; tests drive it with in-process players.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable

from barbu.rules import Action, MatchState, View, observe

from arbiter.referee.faults import FaultKind, PlayerFault


class Player(ABC):
    """A seat's player, awaited by :meth:`Referee.play <arbiter.referee.loop.Referee.play>` in
    its event loop. A player behind a network stream waits for its bot without blocking the
    loop; an in-process one (:class:`StrategyPlayer`) answers at once."""

    name: str = "player"

    async def start(self, seat: int, view: View) -> None:  # noqa: B027 - an optional hook: doing nothing is its default
        """The match begins; ``view`` is the seat's view before the first deal."""

    @abstractmethod
    async def decide(
        self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
    ) -> Action:
        """The seat's action in ``state`` (its turn), among ``state.legal_actions()``; may raise
        PlayerFault. The state is the referee's: read it (``observe(state, seat)`` is the seat's
        view), never change it. ``sent``, if given, is called once the request has gone out
        (the referee then does its bookkeeping while the bot thinks)."""

    async def deal_ended(self, state: MatchState, seat: int) -> None:  # noqa: B027 - an optional hook: doing nothing is its default
        """A deal of ``state`` has been scored (the seat's view's ``results[-1]``). Called seat
        by seat: it should not wait for the bot (a RemotePlayer sends without waiting)."""

    async def match_ended(self, view: View) -> None:  # noqa: B027 - an optional hook: doing nothing is its default
        """The match is over (complete or aborted)."""

    async def close(self) -> None:  # noqa: B027 - an optional hook: doing nothing is its default
        """Release whatever the player holds (processes, streams)."""


class StrategyPlayer(Player):
    """An in-process strategy: a function from the seat's view to an action."""

    def __init__(self, choose: Callable[[View], Action], name: str):
        self.choose = choose
        self.name = name

    async def decide(
        self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
    ) -> Action:
        if sent is not None:
            sent()
        return self.choose(observe(state, seat))


class RandomPlayer(StrategyPlayer):
    """Uniformly random legal play; also the fallback for a faulty seat."""

    def __init__(self, seed: int | str | None = None, name: str = "random"):
        self.rng = random.Random(seed)
        super().__init__(lambda view: self.rng.choice(view.legal), name)


class AbsentPlayer(Player):
    """The seat of a remote entrant that did not come: it faults ``absent`` as the match starts,
    so the fallback plays the seat from the first card and the entrant forfeits."""

    def __init__(self, name: str, detail: str):
        self.name = name
        self.detail = detail

    async def start(self, seat: int, view: View) -> None:
        raise PlayerFault(FaultKind.ABSENT, self.detail, fatal=True)

    async def decide(
        self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
    ) -> Action:
        raise PlayerFault(FaultKind.ABSENT, self.detail, fatal=True)
