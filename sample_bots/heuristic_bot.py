"""A heuristic Barbu bot: hand evaluation, card counting and rules of thumb, no search.

* Declaring: every remaining contract gets an expected raw score for this hand (a small linear
  model per contract, fitted on self-play); the bot names the contract where the hand beats
  that contract's average by the most, counting what the contracts left are still worth (a
  strong Trumps or Domino hand is worth saving those for), with the best trump suit for Trumps
  and the best-fitting start rank for Domino. The 7th declaration is the one left.
* Doubling: it doubles a seat when it expects to outscore it, redoubles those who doubled it
  when it still expects to come out ahead, and always includes the doubles the quota forces.
* Play: in the negative contracts each card carries a "danger" (the points it may still cost);
  the bot sheds danger, ducks under the trick when it can, and takes a trick on purpose only
  when it is cheap (e.g. last to play to a clean trick) to unload a dangerous high card. In
  Trumps it draws trumps with the master trump, cashes masters, ruffs low and wins cheaply. In
  Domino it plays towards its own cards and holds back cards that would only help others.

Every decision is a member of ``view.legal`` and takes well under a millisecond.
Run as a bot process with ``python sample_bots/heuristic_bot.py``; ``bench/heuristic_vs_random.py``
measures it against random players and ``sample_bots/heuristic_strategy/calibrate.py`` refits its tables.
"""

from __future__ import annotations

from typing import Any

from barbu.bot import Bot
from barbu.rules import Contract, Declaration, Phase, View

try:  # imported as sample_bots.heuristic_bot
    from .heuristic_strategy import (
        Knowledge,
        choose_declaration,
        choose_double,
        domino_play,
        negative_play,
        trumps_play,
    )
except ImportError:  # run as a script, or imported with sample_bots/ on sys.path
    from heuristic_strategy import Knowledge, choose_declaration, choose_double, domino_play, negative_play, trumps_play


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1"
    multi_match = True  # it decides from each view alone: one process may play several matches

    def __init__(self, strict: bool = False):
        # strict: let a heuristic's exception propagate (tests) instead of falling back
        self.strict = strict

    def decide(self, view: View) -> Any:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        try:
            if view.phase is Phase.DECLARE:
                action = self.declare(view)
            elif view.phase is Phase.DOUBLE:
                action = self.double(view)
            else:
                action = self.play(view)
        except Exception:  # a heuristic bug must never cost a fault: fall back to a legal move
            if self.strict:
                raise
            action = legal[0]
        return action if action in legal else legal[0]

    def declare(self, view: View) -> Declaration:
        return choose_declaration(view)

    def double(self, view: View) -> tuple[int, ...]:
        return choose_double(view)

    def play(self, view: View) -> int | None:
        if view.phase is Phase.DOMINO or view.contract is Contract.DOMINO:
            return domino_play(view)
        k = Knowledge(view)
        if view.contract is Contract.TRUMPS:
            return trumps_play(view, k)
        return negative_play(view, k)


if __name__ == "__main__":
    from barbu.runner import run

    raise SystemExit(run(HeuristicBot()))
