"""The match state machine: deal, declare, double, play, settle, for a whole match.

``MatchState`` is mutable for speed (a Monte-Carlo bot applies millions of actions);
``clone()`` copies it cheaply. The public entry points are the functions at the bottom:
:func:`new_match`, :func:`deal`, :func:`legal_actions` and :func:`apply`. The actions and
phases are in :mod:`.actions`, the checks that refuse an illegal action in :mod:`.legality`,
shuffled deals and random playouts in :mod:`.playout`.

Legal actions come in a fixed order: declarations by contract in docs/rules.md order, trump
suits C D H S, start ranks 2..A; doubling actions by the mask of their targets (the pass
first); cards ascending (clubs 2 .. spades ace), a Domino pass (``None``) last.

A whole deal, played by hand:

>>> import random
>>> from barbu.rules import make_ruleset, shuffle_hands
>>> state = new_match(make_ruleset("standard"), first_declarer=0)
>>> deal(state, shuffle_hands(random.Random(7)))
>>> state.phase, state.turn
(<Phase.DECLARE: 1>, 0)
>>> [str(d) for d in legal_actions(state)[:7]]
['no_tricks', 'no_hearts', 'no_queens', 'barbu', 'no_last_two', 'trumps (C)', 'trumps (D)']
>>> apply(state, Declaration(Contract.NO_QUEENS))
>>> legal_actions(state)  # seat 1 may pass or double the declarer (or the others)
((), (0,), (2,), (0, 2), (3,), (0, 3), (2, 3), (0, 2, 3))
>>> apply(state, (0,))
>>> while state.phase is Phase.DOUBLE:
...     apply(state, legal_actions(state)[0])
>>> state.phase, len(legal_actions(state)) > 0
(<Phase.PLAY: 3>, True)
>>> apply(state, 99)
Traceback (most recent call last):
  ...
barbu.rules.errors.IllegalActionError: expected a card, got 99
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from . import domino, doubling, scoring, tricks
from .actions import PASS, Action, Declaration, Phase
from .cards import FULL_DECK, HEARTS_MASK, KING_OF_HEARTS, QUEENS, SEVEN_OF_DIAMONDS, SUIT_MASKS, cards_of
from .contracts import CONTRACT_BITS, Contract
from .errors import IllegalActionError
from .legality import checked_card, checked_declaration, checked_domino, checked_targets
from .ruleset import Ruleset
from .scoring import DealResult
from .tricks import Trick as Trick  # re-exported: Trick lived here once

# Constants a compiled build reads as C statics (Final), not as module globals and enum lookups.
_PLAY: Final = Phase.PLAY
_DOMINO: Final = Phase.DOMINO
_DOUBLE: Final = Phase.DOUBLE
_DECLARE: Final = Phase.DECLARE
_DEAL: Final = Phase.DEAL
_OVER: Final = Phase.OVER
_NO_QUEENS: Final = Contract.NO_QUEENS
_NO_HEARTS: Final = Contract.NO_HEARTS
_BARBU: Final = Contract.BARBU
_DOMINO_CONTRACT: Final = Contract.DOMINO
_Trick: Final = Trick
_new_tuple: Final = tuple.__new__  # Trick(...) runs the named tuple's __new__, Python code; tuple's is C


class MatchState:
    """Everything about a match in progress, all four hands included.

    A bot sees its own seat through :func:`~barbu.rules.observe` (a :class:`~barbu.rules.View`);
    a simulating bot builds states of its own (:func:`new_match`, or a sampled deal) and plays
    them out with :func:`legal_actions` / :func:`apply` or :func:`~barbu.rules.random_playout`, on
    ``clone()`` copies. Its attributes are read-only for callers: change it through actions.
    The ones a bot reads most: ``phase``, ``turn`` (the seat to act, -1 when nobody is),
    ``declarer``, ``contract``, ``trump``, ``hands`` (masks), ``trick`` (cards of the trick in
    play), ``tricks``, ``tricks_won``, ``won`` (captured cards per seat), ``layout`` (Domino),
    ``results`` and ``totals``.
    """

    __slots__ = (
        "rules",
        "first_declarer",
        "deal_index",
        "phase",
        "turn",
        "declarer",
        "hands",
        "dealt",
        "declared",
        "quota_doubles",
        "declaration",
        "contract",
        "trump",
        "doubled",
        "doubled_by",
        "redoubled",
        "startable",
        "levels",
        "double_actions",
        "double_step",
        "double_round",
        "leader",
        "trick",
        "trick_mask",
        "best",
        "tricks",
        "won",
        "tricks_won",
        "captured",
        "hearts_broken",
        "plays",
        "frontier",
        "domino_steps",
        "layout",
        "finished",
        "domino_passes",
        "results",
        "totals",
        "_legal",
        "_plain_follow",
    )
    # ``_legal`` caches the legal set of the decision at hand (-1: not computed yet): the card
    # mask in trick play and Domino, ``legal | forced << 4`` target masks while doubling.

    def __init__(self, rules: Ruleset, first_declarer: int = 0) -> None:
        if first_declarer not in (0, 1, 2, 3):
            raise ValueError(f"first_declarer must be a seat 0-3, got {first_declarer!r}")
        self.rules = rules
        self.first_declarer = first_declarer
        self.deal_index = 0
        self.phase = _DEAL
        self.turn = -1
        self.declarer = first_declarer  # M2: the first deal's, whatever the rotation
        self.hands = [0, 0, 0, 0]
        self.dealt: tuple[int, ...] = (0, 0, 0, 0)
        self.declared = [0, 0, 0, 0]  # per seat: mask of contracts declared so far
        # quota_doubles[d][p]: earlier deals of declarer d in which p doubled d
        self.quota_doubles = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
        self.results: list[DealResult] = []
        self.totals = [0, 0, 0, 0]
        self._reset_deal()

    def _reset_deal(self) -> None:
        self.declaration: Declaration | None = None
        self.contract: Contract | None = None
        self.trump: int | None = None
        self.doubled = [0, 0, 0, 0]  # per seat: mask of the seats it doubled first
        self.doubled_by = [0, 0, 0, 0]  # per seat: mask of the seats that doubled it first
        self.redoubled = [0, 0, 0, 0]  # per seat: mask of the seats it is at level 2 with
        self.startable = 0  # seats a non-declarer may open a double on in this deal
        self.levels = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
        self.double_actions: list[tuple[int, tuple[int, ...]]] = []
        self.double_step = 0
        self.double_round = 0
        self.leader = -1
        self.trick: list[int] = []
        self.trick_mask = 0
        self.best = -1
        self.tricks: list[Trick] = []
        self.won = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]
        self.captured = 0
        self.hearts_broken = False
        self.plays: list[tuple[int, int | None]] = []  # Domino turns: (seat, card or None)
        self.frontier = 0  # Domino: the cards that may be played next
        self.domino_steps: tuple[int, ...] = ()  # Domino: per card, what it makes playable
        self.layout = 0
        self.finished: list[int] = []
        self.domino_passes = 0  # Domino: passes in a row since the last card
        self._legal = -1
        self._plain_follow = False

    def clone(self) -> MatchState:
        """An independent copy, cheap enough to make one per simulation."""
        other = MatchState(self.rules, self.first_declarer)  # (a compiled class has no bare __new__)
        # immutable values (ints, tuples, enums, frozen values) are shared
        other.rules, other.first_declarer, other.deal_index = self.rules, self.first_declarer, self.deal_index
        other.phase, other.turn, other.declarer, other.dealt = self.phase, self.turn, self.declarer, self.dealt
        other.declaration, other.contract, other.trump = self.declaration, self.contract, self.trump
        other.startable, other.double_step, other.double_round = self.startable, self.double_step, self.double_round
        other.leader, other.trick_mask, other.best = self.leader, self.trick_mask, self.best
        other.captured, other.hearts_broken, other.frontier = self.captured, self.hearts_broken, self.frontier
        other.domino_steps, other.layout, other.domino_passes = self.domino_steps, self.layout, self.domino_passes
        other._legal, other._plain_follow = self._legal, self._plain_follow
        # lists are copied (an empty one stays the new one __init__ made)
        other.hands = self.hands.copy()
        other.declared = self.declared.copy()
        other.quota_doubles = [r.copy() for r in self.quota_doubles]
        if self.results:
            other.results = self.results.copy()
        other.totals = self.totals.copy()
        other.doubled = self.doubled.copy()
        other.doubled_by = self.doubled_by.copy()
        other.redoubled = self.redoubled.copy()
        other.levels = [r.copy() for r in self.levels]
        if self.double_actions:
            other.double_actions = self.double_actions.copy()
        if self.trick:
            other.trick = self.trick.copy()
        if self.tricks:
            other.tricks = self.tricks.copy()
        other.won = self.won.copy()
        other.tricks_won = self.tricks_won.copy()
        if self.plays:
            other.plays = self.plays.copy()
        if self.finished:
            other.finished = self.finished.copy()
        return other

    # ---- derived facts -----------------------------------------------------------------
    @property
    def dealer(self) -> int:
        """M4: a label only; the declarer, or the seat to his right."""
        return (self.declarer + 3) % 4 if self.rules.dealer_seat == "right_of_declarer" else self.declarer

    @property
    def start_rank(self) -> int | None:
        """The Domino start rank of the current deal, else None."""
        return self.declaration.start_rank if self.declaration else None

    @property
    def is_over(self) -> bool:
        """True once the last deal is scored."""
        return self.phase is _OVER

    def declarations_left(self, seat: int) -> int:
        """The declarer's deals still to come, this one included (k of X7)."""
        declared = self.declared[seat].bit_count()
        if self.phase in (Phase.DOUBLE, Phase.PLAY, Phase.DOMINO) and seat == self.declarer:
            declared -= 1  # the current deal's declaration is already counted
        return len(self.rules.contracts) - declared

    def places(self) -> list[int]:
        """1-based places by the current totals; tied totals share the better place."""
        return scoring.places(self.totals)

    # ---- dealing -----------------------------------------------------------------------
    def deal(self, hands: Sequence[int]) -> None:
        """Start the next deal with these four 13-card hand masks (seat 0 first)."""
        if self.phase is not _DEAL:
            raise IllegalActionError(f"cannot deal now: the match is in the {self.phase.name.lower()} phase")
        if len(hands) != 4 or any(h.bit_count() != 13 for h in hands):
            raise IllegalActionError("a deal is 4 hands of 13 cards each")
        if hands[0] | hands[1] | hands[2] | hands[3] != FULL_DECK:
            raise IllegalActionError("the 4 hands do not partition the 52 cards")
        self._reset_deal()
        self.declarer = self.rules.declarer_of(self.first_declarer, self.deal_index)
        self.hands = list(hands)
        self.dealt = tuple(hands)
        self.phase = _DECLARE
        self.turn = self.declarer

    # ---- legal actions -----------------------------------------------------------------
    def legal_mask(self) -> int:
        """The legal cards (trick play or Domino) as a mask; cached until the next action."""
        if self._legal < 0:
            if self.phase is _PLAY:
                return self._trick_legal()
            if self.phase is not _DOMINO:
                raise IllegalActionError("no card is played in this phase")
            legal = self.hands[self.turn] & self.frontier
            if not self.layout and self.rules.domino_start == "seven_of_diamonds":
                legal &= 1 << SEVEN_OF_DIAMONDS
            self._legal = legal
        return self._legal

    def _trick_legal(self) -> int:
        """The legal cards in trick play, computed and cached (the hot path of every playout)."""
        hand = self.hands[self.turn]
        trick = self.trick
        if not trick:
            contract = self.contract
            assert contract is not None  # trick play follows a declaration
            legal = tricks.legal_lead(self.rules, contract, hand, self.hearts_broken)
        elif self._plain_follow:  # the common case, inlined: follow suit if able, else anything
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        else:
            contract = self.contract
            assert contract is not None
            legal = tricks.legal_follow(
                self.rules, contract, self.trump, hand, trick[0] // 13, self.best, self.trick_mask
            )
        self._legal = legal
        return legal

    def legal_declarations(self) -> list[Declaration]:
        """The declarer's legal declarations (the declare phase's legal actions)."""
        fixed = self.rules.fixed_domino_rank()
        out: list[Declaration] = []
        for c in self.rules.contracts:
            if self.declared[self.declarer] & CONTRACT_BITS[c]:
                continue
            if c is Contract.TRUMPS:
                out.extend(Declaration(c, trump=s) for s in range(4))
            elif c is Contract.DOMINO:
                ranks = range(13) if fixed is None else (fixed,)
                out.extend(Declaration(c, start_rank=r) for r in ranks)
            else:
                out.append(Declaration(c))
        return out

    def double_targets(self) -> tuple[int, int]:
        """(legal, forced) target masks for the seat now doubling; cached like ``_legal``."""
        if self._legal >= 0:
            return self._legal & 15, self._legal >> 4
        seat = self.turn
        forced = False
        if self.double_round == 0 and seat != self.declarer:
            remaining = self.declarations_left(self.declarer)
            forced = doubling.is_forced(self.rules, remaining, self.quota_doubles[self.declarer][seat])
        legal, forced_mask = doubling.target_masks(
            seat,
            self.declarer,
            self.startable,
            self.doubled[seat],
            self.doubled_by[seat],
            self.redoubled[seat],
            self.double_round == 1,
            forced,
        )
        self._legal = legal | forced_mask << 4
        return legal, forced_mask

    def legal_actions(self) -> Sequence[Action]:
        """The legal actions of the seat to act (``turn``), in the fixed order of the module
        docstring; empty when nobody acts. Also available as the function :func:`legal_actions`."""
        phase = self.phase
        if phase is _PLAY:
            legal = self._legal
            return cards_of(legal if legal >= 0 else self._trick_legal())
        if phase is _DOMINO:
            cards = cards_of(self.legal_mask())
            if not cards:
                return (PASS,)
            return cards if self._domino_must_play() else cards + (PASS,)
        if phase is _DOUBLE:
            return doubling.actions_for(*self.double_targets())
        if phase is _DECLARE:
            return self.legal_declarations()
        return ()

    # ---- applying actions --------------------------------------------------------------
    def apply(self, action: object) -> None:
        """Apply the action of the seat to act (``self.turn``); raises IllegalActionError saying
        why when it is not legal (and then changes nothing). Also the function :func:`apply`.

        ``action`` is typed ``object``: whatever a caller passes is checked here, and refused with
        the reason (a compiled build would otherwise refuse a value of another type, such as a
        list of targets, with a bare TypeError before the check)."""
        phase = self.phase
        if phase is _PLAY:
            legal = self._legal
            if legal < 0:
                legal = self._trick_legal()
            if type(action) is int and 0 <= action < 52 and legal >> action & 1:
                self._play_card(action)
            else:
                checked_card(self, action)  # raises with the reason
        elif phase is _DOMINO:
            self._domino_turn(checked_domino(self, action))
        elif phase is _DOUBLE:
            self._double(*checked_targets(self, action))
        elif phase is _DECLARE:
            self._declare(checked_declaration(self, action))
        elif phase is _DEAL:
            raise IllegalActionError("the next deal's hands must be dealt first")
        else:
            raise IllegalActionError("the match is over")

    def _domino_must_play(self) -> bool:
        """F4; without it (domino_must_play=false) a pass is free until a whole round of
        seats still in play has passed in a row: then a seat that can play must, or the
        deal could stall forever (docs/rulings.md)."""
        return self.rules.domino_must_play or self.domino_passes >= 4 - len(self.finished)

    # ---- phase transitions -------------------------------------------------------------
    def _declare(self, decl: Declaration) -> None:
        self.declaration = decl
        self.contract = decl.contract
        self.trump = decl.trump
        self.declared[self.declarer] |= CONTRACT_BITS[decl.contract]
        self.startable = doubling.startable_targets(self.rules, decl.contract, self.declarer)
        self.phase = _DOUBLE
        self.turn = (self.declarer + 1) % 4

    def _double(self, mask: int, targets: tuple[int, ...]) -> None:
        seat = self.turn
        if mask:
            levels = self.levels
            for t in targets:
                if self.doubled_by[seat] >> t & 1:
                    levels[seat][t] = levels[t][seat] = 2
                    self.redoubled[seat] |= 1 << t
                    self.redoubled[t] |= 1 << seat
                else:
                    self.doubled[seat] |= 1 << t
                    self.doubled_by[t] |= 1 << seat
                    levels[seat][t] = levels[t][seat] = 1
        self.double_actions.append((seat, targets))
        self.double_step += 1
        self._legal = -1
        if self.double_step < 4:
            self.turn = (seat + 1) % 4
            return
        if self.double_round == 0:
            declarer = self.declarer
            for p in range(4):
                if self.doubled[p] >> declarer & 1:
                    self.quota_doubles[declarer][p] += 1
            if self.rules.redouble_window == "extra_round":
                self.double_round = 1
                self.double_step = 0
                self.turn = (declarer + 1) % 4
                return
        self._start_play()

    def _start_play(self) -> None:
        rules, contract, declarer, declaration = self.rules, self.contract, self.declarer, self.declaration
        assert contract is not None and declaration is not None
        doubled_any = any(any(row) for row in self.levels)
        if rules.undoubled_negative == "split" and not contract.is_positive and not doubled_any:
            self._end_deal("split", scoring.split_raw_scores(rules, contract, declarer))
            return
        if contract is _DOMINO_CONTRACT:
            self.phase = _DOMINO
            start = declaration.start_rank
            assert start is not None  # a Domino declaration has its start rank
            self.frontier = domino.start_cards(start)
            self.domino_steps = domino.frontier_steps(start, rules.domino_ace)
            if rules.domino_start == "seven_of_diamonds":
                self.turn = next(s for s in range(4) if self.hands[s] >> SEVEN_OF_DIAMONDS & 1)
            else:
                self.turn = (declarer + (rules.domino_first_player == "left_of_declarer")) % 4
        else:
            self.phase = _PLAY
            self._plain_follow = tricks.follow_is_plain(rules, contract)
            self.turn = (declarer + (rules.first_lead == "left_of_declarer")) % 4
            self.leader = self.turn

    def _play_card(self, card: int) -> None:
        seat = self.turn
        bit = 1 << card
        hands = self.hands
        hands[seat] = hands[seat] ^ bit  # (not ^=: compiled, that is Python's generic operator)
        self._legal = -1
        trick = self.trick
        trick.append(card)
        self.trick_mask |= bit
        if len(trick) == 1:
            self.leader = seat
            self.best = card
            self.turn = (seat + 1) % 4
            return
        # P3: a higher card of the winning card's suit, or the first trump, takes the lead
        best = self.best
        if card // 13 == best // 13:
            if card > best:
                self.best = card
        elif card // 13 == self.trump:
            self.best = card
        if len(trick) < 4:
            self.turn = (seat + 1) % 4
            return
        self._take_trick(tuple(trick), self.trick_mask, (self.leader + trick.index(self.best)) % 4)

    def _take_trick(self, cards: tuple[int, ...], mask: int, winner: int) -> None:
        """Record the complete trick of ``cards`` (their ``mask``) for ``winner``, who leads
        next, and end the deal when its trick play is over. ``hands``, ``leader`` and ``best``
        are already the trick's; random playouts play whole tricks and call this too."""
        tricks_taken = self.tricks
        tricks_taken.append(_new_tuple(_Trick, (len(tricks_taken), self.leader, cards, winner)))
        won, tricks_won = self.won, self.tricks_won
        won[winner] = won[winner] | mask  # (not |=: compiled, that is Python's generic operator)
        tricks_won[winner] = tricks_won[winner] + 1
        self.captured |= mask
        if mask & HEARTS_MASK:
            self.hearts_broken = True
        if self.trick:
            self.trick = []
            self.trick_mask = 0
        self.turn = self.leader = winner
        reason = self._trick_play_end()
        if reason:
            last_two = (self.tricks[11].winner, self.tricks[12].winner) if len(self.tricks) == 13 else None
            contract = self.contract
            assert contract is not None
            raw = scoring.trick_raw_scores(self.rules, contract, self.won, self.tricks_won, last_two)
            self._end_deal(reason, raw)

    def trick_play_history(self) -> list[tuple[int, int]]:
        """Every (seat, card) played this deal, in order (trick play keeps no separate list)."""
        return tricks.play_order(self.tricks, self.leader, self.trick)

    def _trick_play_end(self) -> str | None:
        if len(self.tricks) == 13:
            return "all_tricks"
        # the early_end switch is read only once a contract's penalty cards are all taken
        contract, captured = self.contract, self.captured
        if contract is _NO_QUEENS and captured & QUEENS == QUEENS:
            return "all_queens" if self.rules.early_end != "none" else None
        if contract is _BARBU and captured & KING_OF_HEARTS:
            return "king_taken" if self.rules.early_end != "none" else None
        if contract is _NO_HEARTS and captured & HEARTS_MASK == HEARTS_MASK:
            return "all_hearts" if self.rules.early_end == "extended" else None
        return None

    def _domino_turn(self, card: int | None) -> None:
        seat = self.turn
        hands = self.hands
        self.plays.append((seat, card))
        self._legal = -1
        again = False
        self.domino_passes = self.domino_passes + 1 if card is None else 0
        if card is not None:
            bit = 1 << card
            hand = hands[seat] ^ bit
            hands[seat] = hand
            self.layout |= bit
            self.frontier = (self.frontier ^ bit) | self.domino_steps[card]
            if not hand:
                self.finished.append(seat)
                if len(self.finished) == 3:
                    self.finished.append(next(s for s in range(4) if s not in self.finished))
                    self._end_deal("domino_done", scoring.domino_raw_scores(self.rules, self.finished))
                    return
            else:
                again = card % 13 == 12 and self.rules.domino_ace_replay
        if not again:
            nxt = (seat + 1) % 4
            while not hands[nxt]:
                nxt = (nxt + 1) % 4
            self.turn = nxt

    def _end_deal(self, reason: str, raw: list[int]) -> None:
        declaration = self.declaration
        assert declaration is not None
        scores = scoring.settle(self.rules, raw, self.levels)
        for s in range(4):
            self.totals[s] += scores[s]
        self.results.append(
            DealResult(
                deal=self.deal_index,
                declarer=self.declarer,
                declaration=declaration,
                levels=tuple(tuple(r) for r in self.levels),
                reason=reason,
                raw=tuple(raw),
                scores=tuple(scores),
                totals=tuple(self.totals),
            )
        )
        self.deal_index += 1
        self.turn = -1
        self._legal = -1
        self.phase = _OVER if self.deal_index == self.rules.deals_per_match else _DEAL


# ---- the functional API ----------------------------------------------------------------
def new_match(rules: Ruleset, first_declarer: int = 0) -> MatchState:
    """A match about to be dealt its first deal (phase ``DEAL``); seat ``first_declarer``
    declares first."""
    return MatchState(rules, first_declarer)


def deal(state: MatchState, hands: Sequence[int]) -> None:
    """Start the next deal of ``state`` with four 13-card hand masks (see :func:`~barbu.rules.shuffle_hands`)."""
    state.deal(hands)


# The functional names are the methods themselves: no extra call on the hot path.
legal_actions = MatchState.legal_actions
"""``legal_actions(state)``: the legal actions of the seat to act (:meth:`MatchState.legal_actions`)."""
apply = MatchState.apply
"""``apply(state, action)``: play the action of the seat to act (:meth:`MatchState.apply`)."""
