"""Trick play (docs/rules.md §5 and the lead/follow/trump switches of §10.2).

All functions work on masks: ``hand`` is the player's cards, ``best`` the card currently
winning the trick. They return the mask of legal cards, never empty for a non-empty hand.
A bot that simulates play from a hypothetical hand (a sampled deal) can ask them directly:

>>> from barbu.rules import make_ruleset, parse_hand, hand_names
>>> from barbu.rules.cards import SPADES
>>> rules = make_ruleset("standard")
>>> hand = parse_hand(["2H", "KH", "3C"])
>>> hand_names(legal_lead(rules, Contract.NO_HEARTS, hand, hearts_broken=False))
['3C']
>>> hand_names(legal_follow(rules, Contract.NO_HEARTS, None, hand, led=SPADES, best=0, trick_mask=0))
['3C', '2H', 'KH']

This module also defines :class:`Trick`, the record of a completed trick.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from .cards import ACE_OF_HEARTS, HEARTS, HEARTS_MASK, KING_OF_HEARTS, SUIT_MASKS
from .contracts import Contract
from .ruleset import Ruleset

# Read as C statics by a compiled build (Final), not as enum lookups.
_TRUMPS: Final = Contract.TRUMPS
_BARBU: Final = Contract.BARBU
_NO_HEARTS: Final = Contract.NO_HEARTS
_SALAD: Final = Contract.SALAD

__all__ = ["Trick", "follow_is_plain", "legal_follow", "legal_lead", "play_order"]


class Trick(NamedTuple):
    """A completed trick of the current deal (``View.tricks``, ``MatchState.tricks``)."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, as the field always has
    """0-based, in the deal."""
    leader: int
    """The seat that led it."""
    cards: tuple[int, ...]
    """The cards in play order, the leader's first."""
    winner: int
    """The seat that won it (and leads the next one)."""


def legal_lead(rules: Ruleset, contract: Contract, hand: int, hearts_broken: bool) -> int:
    """The cards ``hand`` may lead: P4 and the hearts_lead / barbu_lead switches."""
    if contract is _NO_HEARTS or contract is _SALAD:
        rule = rules.hearts_lead
    elif contract is _BARBU:
        rule = rules.barbu_lead
        if rule == "kh_only_if_last_card":
            return hand if hand == KING_OF_HEARTS else hand & ~KING_OF_HEARTS
    else:
        return hand
    if rule == "any" or (rule == "after_broken" and hearts_broken):
        return hand
    return hand & ~HEARTS_MASK or hand


def legal_follow(
    rules: Ruleset, contract: Contract, trump: int | None, hand: int, led: int, best: int, trick_mask: int
) -> int:
    """The cards ``hand`` may play to a trick: P2, P5 and the trump_lead_must_head /
    trump_void_rule / kh_must_discard switches.

    ``trump`` is the trump suit (Trumps only, else None), ``led`` the led suit, ``best`` the
    card winning the trick so far and ``trick_mask`` the mask of the cards already in it.
    """
    follow = hand & SUIT_MASKS[led]
    if follow:
        if contract is _TRUMPS and led == trump and rules.trump_lead_must_head:
            return follow & ~((2 << best) - 1) or follow
        if (
            contract is _BARBU
            and rules.kh_must_discard == "when_void_or_ace_in_trick"
            and led == HEARTS
            and hand & KING_OF_HEARTS
            and trick_mask & ACE_OF_HEARTS
        ):
            return KING_OF_HEARTS
        return follow
    if contract is _TRUMPS:
        assert trump is not None, "a Trumps deal has a trump suit"
        trumps = hand & SUIT_MASKS[trump]
        rule = rules.trump_void_rule
        if rule == "free" or not trumps:
            return hand
        higher = trumps & ~((2 << best) - 1) if best // 13 == trump else 0
        if rule == "overruff_if_trumped":
            return higher or hand
        if rule == "must_ruff":
            return trumps
        return higher or trumps  # must_ruff_and_overruff
    if contract is _BARBU and rules.kh_must_discard != "never" and hand & KING_OF_HEARTS:
        return KING_OF_HEARTS
    return hand


def follow_is_plain(rules: Ruleset, contract: Contract) -> bool:
    """True when following is just "follow suit if able, else anything" for this contract."""
    if contract is Contract.TRUMPS:
        return False
    return not (contract is Contract.BARBU and rules.kh_must_discard != "never")


def play_order(tricks: Sequence[Trick], leader: int, trick: Sequence[int]) -> list[tuple[int, int]]:
    """Every (seat, card) of a deal's trick play in order, from its tricks and the current one."""
    out = [((t.leader + i) % 4, c) for t in tricks for i, c in enumerate(t.cards)]
    out.extend(((leader + i) % 4, c) for i, c in enumerate(trick))
    return out
