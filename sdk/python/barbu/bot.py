"""The bot base class: what a Python bot author subclasses.

Override ``decide(view)`` for one entry point, or any of ``declare``, ``double`` and ``play``
for one method per kind of decision. ``view.legal`` always holds the legal actions; return one
of them (a ``Declaration``, a tuple of seats, a card ``int`` or ``None`` for a Domino pass).
Run it with ``barbu.runner.run(MyBot())``.
"""

from __future__ import annotations

from typing import Any

from .rules import Declaration, Phase, View


class Bot:
    name = "bot"
    version = "0"
    # Set by the runner before each decision: the free time for it and the reserve left.
    decision_seconds: float = 0.0
    reserve_seconds: float = 0.0

    def decide(self, view: View) -> Any:
        if view.phase is Phase.DECLARE:
            return self.declare(view)
        if view.phase is Phase.DOUBLE:
            return self.double(view)
        return self.play(view)

    def declare(self, view: View) -> Declaration:
        return view.legal[0]

    def double(self, view: View) -> tuple[int, ...]:
        return view.legal[0]

    def play(self, view: View) -> int | None:
        return view.legal[0]

    # Informational messages; override to keep state across decisions (most bots need none).
    def on_match_start(self, view: View) -> None:
        pass

    def on_deal_end(self, view: View) -> None:
        pass

    def on_match_end(self, view: View) -> None:
        pass
