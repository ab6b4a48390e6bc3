"""The bot base class: what a Python bot author subclasses.

Override ``decide(view)`` for one entry point, or any of ``declare``, ``double`` and ``play``
for one method per kind of decision. ``view.legal`` always holds the legal actions; return one
of them (an :data:`~barbu.rules.Action`: a ``Declaration``, a tuple of seats, a card ``int`` or
``None`` for a Domino pass). Run it with ``barbu.runner.run(MyBot())``.

>>> class LowestCard(Bot):
...     name = "lowest"
...     def play(self, view):
...         return view.legal[0]  # legal cards come in ascending order
>>> import random
>>> from barbu.rules import make_ruleset, new_match, deal, shuffle_hands, apply, observe, Phase
>>> state = new_match(make_ruleset("standard"))
>>> deal(state, shuffle_hands(random.Random(3)))
>>> bot = LowestCard()
>>> while state.phase is not Phase.PLAY:
...     apply(state, bot.decide(observe(state, state.turn)))
>>> card = bot.decide(observe(state, state.turn))
>>> card == min(c for c in range(52) if state.hands[state.turn] >> c & 1)  # the lowest card it holds
True
"""

from __future__ import annotations

from typing import cast

from .rules import Action, Declaration, Phase, View


class Bot:
    """A bot: the runner calls :meth:`decide` with a :class:`~barbu.rules.View` for every
    decision of its seat, and the ``on_*`` hooks with the informational messages.

    The defaults play the first legal action: a subclass overrides what it wants to decide.
    A decision must return in time (``decision_seconds`` free, then the reserve). A late or
    illegal answer is a fault: the arbiter plays a substitute action and the match goes on. An
    exception escaping ``decide`` ends the bot's session (the runner logs it with its traceback
    and exits 1): the arbiter records the fault and its fault policy decides the seat's fate.
    """

    name = "bot"
    """The name the bot gives in its hello (the tournament file's entrant name is separate)."""
    version = "0"
    """The version the bot gives in its hello."""
    multi_match: bool = False
    """Whether one process of this bot may play several matches, one after the other (said in
    the hello; off by default). A tournament may then keep the process and hand it its next
    match: :meth:`on_match_start` comes again, with a new seat, rules and time control. Set it
    only if nothing the bot keeps from one match spoils the next (the arbiter never hands it a
    deal it has already seen)."""
    decision_seconds: float = 0.0
    """Set by the runner before each decision: the free time for it, in seconds."""
    reserve_seconds: float = 0.0
    """Set by the runner before each decision: the reserve left (spent once the free time runs out)."""

    def decide(self, view: View) -> Action:
        """Return one of ``view.legal``. By default: :meth:`declare`, :meth:`double` or
        :meth:`play` by ``view.phase``."""
        if view.phase is Phase.DECLARE:
            return self.declare(view)
        if view.phase is Phase.DOUBLE:
            return self.double(view)
        return self.play(view)

    def declare(self, view: View) -> Declaration:
        """The declarer's choice of contract (``view.legal`` holds the legal declarations)."""
        return cast(Declaration, view.legal[0])

    def double(self, view: View) -> tuple[int, ...]:
        """The seats to double or redouble now, ascending; ``()`` passes (the first legal action)."""
        return cast("tuple[int, ...]", view.legal[0])

    def play(self, view: View) -> int | None:
        """The card to play, in trick play or Domino; ``None`` passes in Domino."""
        return cast("int | None", view.legal[0])

    # Informational messages; override to keep state across decisions (most bots need none).
    def on_match_start(self, view: View) -> None:
        """The match begins: ``view`` is the seat's view before the first deal."""

    def on_deal_end(self, view: View) -> None:
        """A deal has been scored: ``view.results[-1]`` is its result."""

    def on_match_end(self, view: View) -> None:
        """The match is over (or aborted): ``view.totals`` are the final totals."""
