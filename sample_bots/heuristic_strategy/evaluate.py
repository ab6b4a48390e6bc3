"""Hand evaluation: an expected raw score per contract, for declaring and for doubling.

Each contract has a few hand features (high cards not covered by low ones, voids, the
dangerous cards of the contract, trump length and honours, Domino blocking counts) and a
linear model on them giving the seat's expected raw score, with the declarer's position (he
leads, or moves first in Domino) as one more feature. The tables below were fitted on 4 000
self-play deals per contract by :mod:`.calibrate` (R² from 0.11 for No Last Two and 0.15 for
Domino, where the play decides most, to 0.46 for No Tricks and 0.72 for Trumps).

Declaring maximises the estimate's gain over the contract's average plus the expected gain of
the contracts left (``FUTURE``). Doubling compares my estimate with the average of the seat
doubled (the declarer's average when he chose the contract; a doubler of mine is assumed a
little better than average) and doubles whenever I expect to come out ahead: duplicate A/B
runs against earlier versions showed every positive margin losing points.
"""

from __future__ import annotations

from barbu.rules import STANDARD_CONTRACTS, Contract, Declaration
from barbu.rules.domino import ordinal

from .domino import blocking_count

HEART = 2
QUEEN, KING, ACE = 10, 11, 12


def _suit_ranks(hand: int) -> list[list[int]]:
    return [[r for r in range(13) if hand >> (s * 13 + r) & 1] for s in range(4)]


def _risk(rank: int, mine_below: int) -> float:
    """How likely a card is to win a trick in a no-trick game, from its rank and its cover."""
    x = (rank - 3) / 9.0
    return (x**1.5 if x > 0 else 0.0) * 0.72**mine_below


def _below(ranks: list[int], rank: int) -> int:
    return sum(1 for r in ranks if r < rank)


def trick_features(hand: int) -> dict[str, float]:
    """Features shared by the negative contracts."""
    suits = _suit_ranks(hand)
    risk = [sum(_risk(r, i) for i, r in enumerate(rs)) for rs in suits]
    lengths = [len(rs) for rs in suits]
    f = {
        "risk": sum(risk),
        "voids": sum(1 for n in lengths if n == 0),
        "singletons": sum(1 for n in lengths if n == 1),
        "low": sum(1 for rs in suits for r in rs if r <= 3),
        "long": sum(max(0, n - 4) * (max(rs) >= 8) for n, rs in zip(lengths, suits, strict=True) if rs),
    }
    hearts = suits[HEART]
    f["hearts"] = len(hearts)
    f["heart_risk"] = risk[HEART]
    f["heart_ace"] = 1.0 if ACE in hearts else 0.0
    f["heart_high"] = sum(1 for r in hearts if r >= 8)
    f["heart_low"] = sum(1 for r in hearts if r <= 5)
    nonheart_void = sum(1 for s in (0, 1, 3) if lengths[s] == 0) + 0.5 * sum(1 for s in (0, 1, 3) if lengths[s] == 1)
    f["side_short"] = nonheart_void
    # queens: my own queens poorly covered, and kings/aces that may catch someone's queen
    q_risk = 0.0
    catch = 0.0
    for rs in suits:
        if QUEEN in rs:
            q_risk += 0.75 ** _below(rs, QUEEN) * (1.0 if len(rs) <= 3 else 0.7)
        else:
            for hi in (KING, ACE):
                if hi in rs:
                    catch += 0.7 ** _below(rs, hi)
    f["queen_risk"] = q_risk
    f["queens"] = sum(1 for rs in suits if QUEEN in rs)
    f["catch"] = catch
    # barbu: the king of hearts and what covers it
    kh = KING in hearts
    low_hearts = sum(1 for r in hearts if r < KING)
    f["kh"] = 1.0 if kh else 0.0
    f["kh_bare"] = (0.6**low_hearts) if kh else 0.0
    f["ah_only"] = (0.6 ** sum(1 for r in hearts if r < ACE)) if ACE in hearts and not kh else 0.0
    # last two: what remains at the end is the low cards
    ranks = sorted(r for rs in suits for r in rs)
    f["lowest3"] = sum(ranks[:3]) / 3.0
    f["high"] = sum(1 for r in ranks if r >= QUEEN)
    return f


def trumps_features(hand: int, trump: int) -> dict[str, float]:
    suits = _suit_ranks(hand)
    t = suits[trump]
    honours = sum({12: 4, 11: 3, 10: 2, 9: 1}.get(r, 0) for r in t)
    side = [suits[s] for s in range(4) if s != trump]
    return {
        "tlen": len(t),
        "tlen_x": max(0, len(t) - 4),
        "thon": honours,
        "aces": sum(1 for rs in side if ACE in rs),
        "kings": sum(1 for rs in side if KING in rs and len(rs) >= 2),
        "queens": sum(1 for rs in side if QUEEN in rs and len(rs) >= 3),
        "short": sum(1 for rs in side if len(rs) == 0) + 0.5 * sum(1 for rs in side if len(rs) == 1),
    }


def domino_features(hand: int, start_rank: int, ace: str) -> dict[str, float]:
    waits, waiting = blocking_count(hand, start_rank, ace)
    starts = sum(1 for s in range(4) if hand >> (s * 13 + start_rank) & 1)
    so = ordinal(start_rank, ace)
    dists = [abs(ordinal(c % 13, ace) - so) for c in range(52) if hand >> c & 1]
    # other players' cards that can only be played after one of mine
    blocks = 0
    for suit in range(4):
        mine = {ordinal(c % 13, ace) for c in range(suit * 13, suit * 13 + 13) if hand >> c & 1}
        for d in (1, -1):
            seen_mine = so in mine
            o = so + d
            while 0 <= o <= 12:
                if o in mine:
                    seen_mine = True
                elif seen_mine:
                    blocks += 1
                o += d
    return {
        "waits": waits, "waiting": waiting, "starts": starts,
        "dist": sum(dists) / 13.0, "far": sum(1 for d in dists if d >= 5), "blocks": blocks,
    }  # fmt: skip


# Linear models: expected raw score of a seat, by contract (standard score values).
# "decl" is 1 for the declarer (who leads the first trick / moves first in Domino).
MODELS: dict[Contract, dict[str, float]] = {
    Contract.NO_TRICKS: {
        "const": 2.71, "decl": -0.62, "ah_only": 1.23, "catch": 0.79, "heart_ace": -0.19, "heart_high": 0.02,
        "heart_low": -0.12, "heart_risk": -0.48, "hearts": 0.09, "high": -0.26, "kh": -0.02, "kh_bare": 0.23,
        "long": 0.09, "low": 0.05, "lowest3": -0.53, "queen_risk": 0.32, "queens": 0.27, "risk": -4.25,
        "side_short": 0.16, "singletons": 0.36, "voids": 1.27,
    },
    Contract.NO_HEARTS: {
        "const": -8.43, "decl": 0.19, "ah_only": -0.15, "catch": 1.87, "heart_ace": 1.46, "heart_high": 0.43,
        "heart_low": 0.06, "heart_risk": -4.63, "hearts": 1.48, "high": -0.57, "kh": 0.06, "kh_bare": -0.03,
        "long": 1.08, "low": 0.55, "lowest3": -2.50, "queen_risk": 1.98, "queens": 0.02, "risk": -1.35,
        "side_short": -0.05, "singletons": -0.36, "voids": -0.37,
    },
    Contract.NO_QUEENS: {
        "const": -0.96, "decl": -0.16, "ah_only": 0.77, "catch": -1.50, "heart_ace": -0.01, "heart_high": 0.08,
        "heart_low": 0.16, "heart_risk": -0.03, "hearts": 0.01, "high": -0.11, "kh": -0.16, "kh_bare": 0.59,
        "long": 0.40, "low": 0.09, "lowest3": -0.90, "queen_risk": -4.80, "queens": 0.84, "risk": -1.27,
        "side_short": -0.40, "singletons": 1.47, "voids": 1.25,
    },
    Contract.BARBU: {
        "const": -5.49, "decl": -0.31, "ah_only": -4.22, "catch": 1.04, "heart_ace": 0.12, "heart_high": -0.31,
        "heart_low": -0.05, "heart_risk": 3.46, "hearts": 0.87, "high": -0.11, "kh": 5.01, "kh_bare": -11.24,
        "long": 0.95, "low": 0.20, "lowest3": -1.23, "queen_risk": 1.22, "queens": -0.23, "risk": -2.14,
        "side_short": -1.05, "singletons": 0.42, "voids": 0.25,
    },
    Contract.NO_LAST_TWO: {
        "const": -3.18, "decl": 0.82, "ah_only": -0.78, "catch": 1.72, "heart_ace": 0.76, "heart_high": -0.11,
        "heart_low": -0.19, "heart_risk": 0.78, "hearts": -0.05, "high": -0.03, "kh": 0.90, "kh_bare": -2.13,
        "long": 0.72, "low": 0.43, "lowest3": -3.34, "queen_risk": 1.75, "queens": -0.19, "risk": -1.91,
        "side_short": -0.55, "singletons": -0.29, "voids": -1.92,
    },
    Contract.TRUMPS: {
        "const": -4.17, "decl": 0.31, "aces": 5.04, "kings": 3.70, "queens": 1.44, "short": 2.27, "thon": 1.15,
        "tlen": 2.81, "tlen_x": 2.33,
    },
    Contract.DOMINO: {
        "const": 37.34, "decl": -0.69, "blocks": 0.83, "dist": -0.15, "far": -0.95, "starts": -5.04,
        "waiting": -0.78, "waits": -0.89,
    },
}  # fmt: skip

# Mean of the best estimate for a random hand, as declarer (the yardstick for declaring).
BASELINE: dict[Contract, float] = {
    Contract.NO_TRICKS: -6.93, Contract.NO_HEARTS: -7.34, Contract.NO_QUEENS: -6.09, Contract.BARBU: -5.18,
    Contract.NO_LAST_TWO: -6.87, Contract.TRUMPS: 23.00, Contract.DOMINO: 22.86,
}  # fmt: skip

# Declaring is an assignment problem: 7 hands in a row, each contract once. FUTURE[R] is the
# expected total gain (estimate minus BASELINE) of the best policy over the contracts still in
# R (bit i = STANDARD_CONTRACTS[i]), from a dynamic programme over sampled hands. Naming c now
# is worth gain(c) + FUTURE[R without c]: a good Domino or Trumps hand is worth saving for.
FUTURE = (
    0.00, 0.00, 0.00, 1.27, 0.00, 0.60, 1.40, 2.69, 0.00, 1.18, 1.15, 3.03, 1.24, 2.51, 3.19, 4.94,
    0.00, 1.20, 1.09, 3.00, 1.33, 2.54, 3.21, 4.92, 1.23, 3.01, 2.93, 5.21, 3.16, 4.84, 5.42, 7.47,
    0.00, 3.36, 3.38, 6.54, 3.15, 5.75, 6.49, 9.15, 2.95, 6.10, 6.13, 9.36, 6.01, 8.70, 9.36, 12.18,
    3.23, 6.34, 6.30, 9.50, 6.31, 8.90, 9.55, 12.30, 6.05, 9.20, 9.18, 12.48, 9.21, 11.97, 12.55, 15.46,
    0.00, 2.52, 3.22, 5.76, 2.48, 4.58, 5.84, 8.09, 2.71, 5.28, 5.78, 8.53, 5.31, 7.60, 8.65, 11.12,
    3.22, 5.65, 6.24, 8.86, 5.75, 7.89, 9.02, 11.38, 5.87, 8.49, 8.94, 11.78, 8.61, 10.99, 11.95, 14.53,
    3.92, 8.00, 8.64, 12.35, 7.80, 11.12, 12.28, 15.49, 7.89, 11.66, 12.17, 15.85, 11.57, 14.83, 15.85, 19.11,
    8.53, 12.13, 12.72, 16.26, 12.10, 15.21, 16.29, 19.43, 12.12, 15.69, 16.17, 19.76, 15.70, 18.87, 19.83, 23.06,
)  # fmt: skip

# Mean raw score of a declarer who picked the contract (the yardstick for doubling him).
DECLARER_MEAN: dict[Contract, float] = {
    Contract.NO_TRICKS: -4.9, Contract.NO_HEARTS: -4.2, Contract.NO_QUEENS: -4.7, Contract.BARBU: -3.3,
    Contract.NO_LAST_TWO: -4.2, Contract.TRUMPS: 30.4, Contract.DOMINO: 30.2,
}  # fmt: skip


def _linear(model: dict[str, float], f: dict[str, float], declarer: bool) -> float:
    total = model.get("const", 0.0) + (model.get("decl", 0.0) if declarer else 0.0)
    for key, w in model.items():
        if key not in ("const", "decl"):
            total += w * f.get(key, 0.0)
    return total


def _scale(rules, contract: Contract) -> float:
    """Models are fitted on the standard scores; scale them to the ruleset's contract total."""
    standard = {Contract.NO_TRICKS: -26, Contract.NO_HEARTS: -30, Contract.NO_QUEENS: -24, Contract.BARBU: -20,
                Contract.NO_LAST_TWO: -30, Contract.TRUMPS: 65, Contract.DOMINO: 65}  # fmt: skip
    if contract not in standard:
        return 1.0
    total = rules.contract_total(contract)
    return total / standard[contract] if standard[contract] else 1.0


def estimate(rules, hand: int, decl: Declaration, declarer: bool) -> float:
    """Expected raw score of the seat holding ``hand`` in the declared contract."""
    c = decl.contract
    if c is Contract.SALAD:
        f = trick_features(hand)
        return sum(_linear(MODELS[x], f, declarer) * _scale(rules, x) for x in MODELS if not x.is_positive)
    if c is Contract.TRUMPS:
        f = trumps_features(hand, decl.trump)
    elif c is Contract.DOMINO:
        f = domino_features(hand, decl.start_rank, rules.domino_ace)
    else:
        f = trick_features(hand)
    value = _linear(MODELS[c], f, declarer)
    if c is Contract.DOMINO:
        payouts = rules.domino_payouts
        return payouts[3] + (value - (-5)) * (payouts[0] - payouts[3]) / 50.0
    return value * _scale(rules, c)


def baseline(rules, contract: Contract) -> float:
    if contract is Contract.SALAD:
        return rules.contract_total(contract) / 4.0 + 2.0
    if contract is Contract.DOMINO:
        payouts = rules.domino_payouts
        return payouts[3] + (BASELINE[contract] + 5) * (payouts[0] - payouts[3]) / 50.0
    return BASELINE[contract] * _scale(rules, contract)


def declarer_mean(rules, contract: Contract) -> float:
    if contract is Contract.SALAD:
        return rules.contract_total(contract) / 4.0 + 6.0
    if contract is Contract.DOMINO:
        payouts = rules.domino_payouts
        return payouts[3] + (DECLARER_MEAN[contract] + 5) * (payouts[0] - payouts[3]) / 50.0
    return DECLARER_MEAN[contract] * _scale(rules, contract)


# ---- declaring ------------------------------------------------------------------------------


def contracts_left(rules, legal) -> int:
    """The contracts among the legal declarations, as a mask (bit i: STANDARD_CONTRACTS[i]); 0
    unless the rules play the standard seven (other sets have no ``FUTURE`` table)."""
    left = 0
    if rules.contracts != STANDARD_CONTRACTS:
        return left
    for decl in legal:
        left |= 1 << STANDARD_CONTRACTS.index(decl.contract)
    return left


def future_gain(rules, left: int, contract: Contract) -> float:
    """The expected gain of the contracts still to declare once ``contract`` is declared
    (``FUTURE``; 0 unless the rules play the standard seven)."""
    if rules.contracts != STANDARD_CONTRACTS:
        return 0.0
    return FUTURE[left & ~(1 << STANDARD_CONTRACTS.index(contract))]


def choose_declaration(view) -> Declaration:
    """The legal declaration with the best gain now plus the expected gain of what remains."""
    rules, hand = view.rules, view.hand
    left = contracts_left(rules, view.legal)
    best, best_value = view.legal[0], float("-inf")
    for decl in view.legal:
        value = estimate(rules, hand, decl, True) - baseline(rules, decl.contract)
        value += future_gain(rules, left, decl.contract)
        if value > best_value:
            best, best_value = decl, value
    return best


# ---- doubling -------------------------------------------------------------------------------


def expected_scores(rules, contract: Contract, me: int, declarer: int, mine: float) -> list[float]:
    """My estimate ``mine`` for me, the declarer's average for him, the rest of the contract's
    total shared by the others."""
    total = rules.contract_total(contract)
    exp = [0.0] * 4
    exp[me] = mine
    if me == declarer:
        for s in range(4):
            if s != me:
                exp[s] = (total - mine) / 3.0
    else:
        d = declarer_mean(rules, contract)
        exp[declarer] = d
        for s in range(4):
            if s not in (me, declarer):
                exp[s] = (total - mine - d) / 2.0
    return exp


# Doubling margins, in points of a 26-point contract (scaled to the contract's size).
MARGIN_DECLARER = 0.0  # double the declarer when I expect to beat him by this much
MARGIN_OTHER = 0.0  # the same for another defender (negative contracts)
MARGIN_REDOUBLE = 0.0  # redouble a seat that doubled me
DOUBLER_EDGE = 2.0  # a seat that doubled me is assumed that much better than average
QUOTA_EASE = 3.0  # how far the margin drops when the quota will force this double anyway


def _quota_forced(view, seat: int) -> bool:
    """Was ``seat``'s double of the declarer forced by the quota (docs/rules.md X7)?"""
    rules = view.rules
    if rules.quota_enforcement != "forced" or rules.double_quota <= 0:
        return False
    return rules.double_quota - view.quota_doubles[seat] >= view.declarations_left


def choose_double(view) -> tuple[int, ...]:
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    rules, me, declarer = view.rules, view.seat, view.declarer
    legal_mask = 0
    forced_mask = 15
    for action in legal:
        m = sum(1 << t for t in action)
        legal_mask |= m
        forced_mask &= m
    decl = view.declaration
    exp = expected_scores(rules, decl.contract, me, declarer, estimate(rules, view.hand, decl, me == declarer))
    scale = abs(rules.contract_total(view.contract)) / 26.0
    doubled_me = set()
    for seat, targets in view.doubles:
        if me in targets and not (me == declarer and _quota_forced(view, seat)):
            doubled_me.add(seat)  # a double the quota forced tells nothing about his hand
    # forced quota doubles coming soon: doubling the declarer now costs little
    quota_pressure = 0.0
    if me != declarer and rules.double_quota > 0:
        need = rules.double_quota - view.quota_doubles[me]
        if need > 0:
            quota_pressure = need / max(1, view.declarations_left)
    want = 0
    for t in range(4):
        if not legal_mask >> t & 1:
            continue
        edge = exp[me] - exp[t]
        if t in doubled_me:
            # he thinks he beats me: assume he is a little better than average
            margin = MARGIN_REDOUBLE * scale
            edge -= DOUBLER_EDGE * scale
        elif t == declarer:
            margin = (MARGIN_DECLARER - QUOTA_EASE * quota_pressure) * scale
        else:
            margin = MARGIN_OTHER * scale
        if edge > margin:
            want |= 1 << t
    want = (want & legal_mask) | forced_mask
    for action in legal:
        if sum(1 << t for t in action) == want:
            return action
    return legal[0]
