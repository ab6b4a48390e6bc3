"""A seat's view as the table page draws it: plain JSON, and a key for each legal choice.

The page never computes a rule: what it may offer is the decision request's legal actions,
each under a key (``c37`` a card, ``pass`` a Domino pass, ``d:barbu::`` a declaration,
``x:1,3`` doubling seats 1 and 3, ``x:`` doubling nobody). A choice comes back as a key; a key
that is not among the legal ones of the request in hand is refused (:func:`legal_keys`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from barbu.rules import Action, Declaration, Phase, View
from barbu.rules.cards import SUIT_SYMBOLS, cards_of

from arbiter.replay.model import REASONS, card_label, contract_label, layout_rows

__all__ = ["action_key", "action_label", "legal_keys", "view_json"]

SUIT_ORDER = (3, 2, 0, 1)  # a hand is shown ♠ ♥ ♣ ♦: colours alternate


def action_key(action: Action) -> str:
    """The key under which the page offers and returns ``action``."""
    if action is None:
        return "pass"
    if isinstance(action, Declaration):
        trump = "" if action.trump is None else str(action.trump)
        start = "" if action.start_rank is None else str(action.start_rank)
        return f"d:{action.contract.value}:{trump}:{start}"
    if isinstance(action, tuple):
        return "x:" + ",".join(str(t) for t in action)
    return f"c{action}"


def action_label(action: Action, names: Sequence[str]) -> str:
    """What the page writes on the button of ``action``."""
    if action is None:
        return "Pass"
    if isinstance(action, Declaration):
        return contract_label(action)
    if isinstance(action, tuple):
        return "Double " + ", ".join(names[t] for t in action if isinstance(t, int)) if action else "No double"
    return card_label(action)


def legal_keys(legal: Sequence[Action]) -> dict[str, Action]:
    """The legal actions by key."""
    return {action_key(a): a for a in legal}


def _card(card: int) -> dict[str, Any]:
    suit = card // 13
    return {"id": card, "label": card_label(card), "rank": card_label(card)[:-1], "suit": SUIT_SYMBOLS[suit]}


def _hand(mask: int) -> list[dict[str, Any]]:
    cards = sorted(cards_of(mask), key=lambda c: (SUIT_ORDER.index(c // 13), -(c % 13)))
    return [_card(c) for c in cards]


def _trick(leader: int, cards: Sequence[int]) -> list[dict[str, Any]]:
    return [{"seat": (leader + i) % 4, **_card(c)} for i, c in enumerate(cards)]


def _result(view: View, index: int) -> dict[str, Any]:
    r = view.results[index]
    return {
        "deal": r.deal + 1,
        "declarer": r.declarer,
        "contract": contract_label(r.declaration),
        "reason": REASONS.get(r.reason, r.reason),
        "scores": list(r.scores),
        "totals": list(r.totals),
    }


def view_json(view: View, names: Sequence[str]) -> dict[str, Any]:
    """What the page shows of ``view`` (the seat's own, so its hand and everything public)."""
    last = view.tricks[-1] if view.tricks else None
    domino = view.phase is Phase.DOMINO
    return {
        "phase": view.phase.name.lower(),
        "deal": min(view.deal + 1, 4 * len(view.rules.contracts)),  # (past the last once it is over)
        "deals": 4 * len(view.rules.contracts),
        "declarer": view.declarer,
        "contract": contract_label(view.declaration) if view.declaration else None,
        "turn": view.turn,
        "hand": _hand(view.hand),
        "hand_sizes": list(view.hand_sizes),
        "trick": _trick(view.trick_leader, view.trick) if view.trick_leader >= 0 else [],
        "last_trick": (
            {"cards": _trick(last.leader, last.cards), "winner": last.winner}
            if last is not None and not domino
            else None
        ),
        "tricks_won": list(view.tricks_won),
        "doubles": [{"seat": seat, "targets": list(targets)} for seat, targets in view.doubles],
        "levels": [[a, b, view.levels[a][b]] for a in range(4) for b in range(a + 1, 4) if view.levels[a][b]],
        "layout": [[_card(c) for c in row] for row in layout_rows(view.layout, view.rules)] if domino else None,
        "finished": list(view.finished),
        "results": [_result(view, i) for i in range(len(view.results))],
        "totals": list(view.totals),
    }
