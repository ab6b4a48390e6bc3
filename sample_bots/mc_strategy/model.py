"""A model of the other seats' bidding: the heuristic bot's hand evaluation and rules.

Search needs to know how a seat with a given hand declares and doubles, twice: to finish the
doubling phase in a simulation (the seats after this one answer its double), and to weigh a
sampled deal by how well it explains what the seats actually declared and doubled
(:mod:`.belief`). Both use the heuristic bot's linear hand evaluation
(``heuristic_strategy.evaluate``), made fast enough to run once per sample: the negative
contracts share one feature vector per hand, and Domino features are sums of per-suit terms
memoised by suit pattern.
"""

from __future__ import annotations

from barbu.rules import STANDARD_CONTRACTS, Contract, Declaration, Phase
from barbu.rules.cards import FULL_SUIT
from barbu.rules.state import MatchState

try:
    from heuristic_strategy import evaluate as _ev
except ImportError:  # imported as sample_bots.mc_strategy
    from ..heuristic_strategy import evaluate as _ev

_NEGATIVE = (Contract.NO_TRICKS, Contract.NO_HEARTS, Contract.NO_QUEENS, Contract.BARBU, Contract.NO_LAST_TWO)
_DOMINO_KEYS = ("waits", "waiting", "starts", "dist", "far", "blocks")
MEMO_LIMIT = 50000


class Estimator:
    """The heuristic's expected raw score of a hand in a declaration, memoised."""

    def __init__(self, rules):
        self.rules = rules
        self.memo: dict[tuple, float] = {}
        self.features: dict[int, dict] = {}
        self.domino_suits: dict[tuple[int, int], float] = {}
        self.baselines: dict[Contract, float] = {}

    def _trick_features(self, hand: int) -> dict:
        f = self.features.get(hand)
        if f is None:
            if len(self.features) > MEMO_LIMIT:
                self.features.clear()
            f = self.features[hand] = _ev.trick_features(hand)
        return f

    def _domino(self, hand: int, start: int, declarer: bool) -> float:
        """``evaluate.estimate`` for Domino: a linear model on features that add up over the
        suits, so each suit's share of the sum is memoised by its pattern."""
        model = _ev.MODELS[Contract.DOMINO]
        ace = self.rules.domino_ace
        value = model.get("const", 0.0) + (model.get("decl", 0.0) if declarer else 0.0)
        memo = self.domino_suits
        for s in range(4):
            key = (hand >> (13 * s) & FULL_SUIT, start)
            part = memo.get(key)
            if part is None:
                f = _ev.domino_features(key[0], start, ace)  # the pattern as clubs: suits are alike
                part = memo[key] = sum(model.get(k, 0.0) * f[k] for k in _DOMINO_KEYS)
            value += part
        payouts = self.rules.domino_payouts
        return payouts[3] + (value - (-5)) * (payouts[0] - payouts[3]) / 50.0

    def __call__(self, hand: int, decl: Declaration, declarer: bool) -> float:
        key = (hand, decl, declarer)
        got = self.memo.get(key)
        if got is None:
            c = decl.contract
            if c in _NEGATIVE:
                f = self._trick_features(hand)
                got = _ev._linear(_ev.MODELS[c], f, declarer) * _ev._scale(self.rules, c)
            elif c is Contract.DOMINO:
                got = self._domino(hand, decl.start_rank, declarer)
            else:
                got = _ev.estimate(self.rules, hand, decl, declarer)
            if len(self.memo) > MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = got
        return got

    def declaration_values(self, hand: int, menu: list[Declaration], remaining: int | None) -> list[float]:
        """The heuristic's value of each declaration: estimate, less the contract's usual score,
        plus what the contracts left are worth (``remaining``: bits of STANDARD_CONTRACTS)."""
        out = []
        baselines = self.baselines
        for d in menu:
            c = d.contract
            base = baselines.get(c)
            if base is None:
                base = baselines[c] = _ev.baseline(self.rules, c)
            v = self(hand, d, True) - base
            if remaining is not None:
                v += _ev.FUTURE[remaining & ~(1 << STANDARD_CONTRACTS.index(c))]
            out.append(v)
        return out


_ESTIMATORS: dict = {}


def estimator_for(rules) -> Estimator:
    """One estimator per ruleset for the life of the process: its memos carry over decisions."""
    est = _ESTIMATORS.get(rules)
    if est is None:
        est = _ESTIMATORS[rules] = Estimator(rules)
    return est


def menu_of(rules, declared_before) -> tuple[list[Declaration], int | None]:
    """Every declaration open to a declarer who has declared ``declared_before`` (and the
    standard-contract bits left, for ``FUTURE``; None with another menu)."""
    fixed = rules.fixed_domino_rank()
    menu = []
    remaining = 0
    for c in rules.contracts:
        if c in declared_before:
            continue
        if c is Contract.TRUMPS:
            menu.extend(Declaration(c, trump=s) for s in range(4))
        elif c is Contract.DOMINO:
            menu.extend(Declaration(c, start_rank=r) for r in (range(13) if fixed is None else (fixed,)))
        else:
            menu.append(Declaration(c))
        if c in STANDARD_CONTRACTS:
            remaining |= 1 << STANDARD_CONTRACTS.index(c)
    return menu, remaining if rules.contracts == STANDARD_CONTRACTS else None


# ---- doubling ---------------------------------------------------------------------------------
def _quota_forced(rules, quota: list[int], left: int, seat: int) -> bool:
    if rules.quota_enforcement != "forced" or rules.double_quota <= 0:
        return False
    return rules.double_quota - quota[seat] >= left


def model_double(state: MatchState, estimate: float) -> tuple[int, ...]:
    """The heuristic's doubling rule (``evaluate.choose_double``) for the seat to act, given
    its own estimate: double a seat it expects to outscore, redouble a doubler it still
    expects to beat (a doubler is assumed a little better than average), add what the quota
    forces."""
    rules, me, declarer = state.rules, state.turn, state.declarer
    legal, forced = state.double_targets()
    if not legal:
        return ()
    contract = state.contract
    exp = _ev.expected_scores(rules, contract, me, declarer, estimate)
    scale = abs(rules.contract_total(contract)) / 26.0
    quota = state.quota_doubles[declarer]
    left = state.declarations_left(declarer)
    doubled_me = 0
    for seat, targets in state.double_actions:
        if me in targets and not (me == declarer and _quota_forced(rules, quota, left, seat)):
            doubled_me |= 1 << seat
    pressure = 0.0
    if me != declarer and rules.double_quota > 0:
        need = rules.double_quota - quota[me]
        if need > 0:
            pressure = need / max(1, left)
    want = forced
    for t in range(4):
        if not legal >> t & 1:
            continue
        edge = exp[me] - exp[t]
        if doubled_me >> t & 1:
            margin = _ev.MARGIN_REDOUBLE * scale
            edge -= _ev.DOUBLER_EDGE * scale
        elif t == declarer:
            margin = (_ev.MARGIN_DECLARER - _ev.QUOTA_EASE * pressure) * scale
        else:
            margin = _ev.MARGIN_OTHER * scale
        if edge > margin:
            want |= 1 << t
    return tuple(t for t in range(4) if want >> t & 1)


def finish_doubling(state: MatchState, estimates: list[float]) -> None:
    """Play the rest of the doubling phase with the model (``estimates`` per seat)."""
    while state.phase is Phase.DOUBLE:
        state.apply(model_double(state, estimates[state.turn]))


__all__ = ["Estimator", "estimator_for", "finish_doubling", "menu_of", "model_double"]
