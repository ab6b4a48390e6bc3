"""The referee's view of a player: anything that can answer a decision request.

The referee never knows whether a player is a bot process, a remote client, or an in-process
strategy; tests drive it with in-process players.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any, Callable

from barbu.rules import View


class Player(ABC):
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
