"""Heuristics behind ``sample_bots/heuristic_bot.py``: no search, only card counting and rules of thumb.

* :mod:`.knowledge` — what a view tells about the cards: played, unseen, known voids, the trick.
* :mod:`.evaluate` — hand evaluation per contract (declaring and doubling).
* :mod:`.tricks` — card play in the negative contracts and in Trumps.
* :mod:`.domino` — Domino play and the choice of a start rank.
"""

from .domino import domino_play
from .evaluate import choose_declaration, choose_double, estimate
from .knowledge import Knowledge
from .tricks import negative_play, trumps_play

__all__ = [
    "Knowledge", "choose_declaration", "choose_double", "domino_play", "estimate",
    "negative_play", "trumps_play",
]  # fmt: skip
