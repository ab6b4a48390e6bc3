"""The Barbu rules engine: pure, deterministic, standard library only.

Cards are ints 0-51 and hands are 52-bit masks (:mod:`.cards`); a match is a
:class:`MatchState` driven by actions (:data:`Action`); a seat sees a :class:`View`
(:func:`observe`). A whole match of random legal actions:

>>> import random
>>> rules = make_ruleset("standard")
>>> state = new_match(rules, first_declarer=0)
>>> rng = random.Random(2024)
>>> while not state.is_over:
...     if state.phase is Phase.DEAL:
...         deal(state, shuffle_hands(rng))
...     else:
...         apply(state, rng.choice(legal_actions(state)))
>>> len(state.results), sum(state.totals)  # 28 deals; the standard game is zero-sum
(28, 0)

The same seed gives the same match: the RNG is the only source of chance. A Monte-Carlo bot
plays its simulations with :func:`random_playout`, several times faster than the loop above.
"""

from .actions import PASS, Action, Declaration, Phase
from .cards import card_name, cards_of, hand_names, parse_card, parse_hand, parse_rank, parse_suit
from .contracts import ALL_CONTRACTS, STANDARD_CONTRACTS, Contract
from .errors import BarbuError, IllegalActionError, NotationError, RulesError
from .playout import random_playout, shuffle_hands
from .ruleset import PRESETS, SWITCHES, Ruleset, make_ruleset, parse_switch_assignments, ruleset_from_json
from .scoring import DealResult
from .state import MatchState, apply, deal, legal_actions, new_match
from .tricks import Trick
from .view import View, observe

__all__ = [
    "ALL_CONTRACTS",
    "PASS",
    "PRESETS",
    "STANDARD_CONTRACTS",
    "SWITCHES",
    "Action",
    "BarbuError",
    "Contract",
    "DealResult",
    "Declaration",
    "IllegalActionError",
    "MatchState",
    "NotationError",
    "Phase",
    "Ruleset",
    "RulesError",
    "Trick",
    "View",
    "apply",
    "card_name",
    "cards_of",
    "deal",
    "hand_names",
    "legal_actions",
    "make_ruleset",
    "new_match",
    "observe",
    "random_playout",
    "parse_card",
    "parse_hand",
    "parse_rank",
    "parse_suit",
    "parse_switch_assignments",
    "ruleset_from_json",
    "shuffle_hands",
]
