"""Hand evaluation: an expected raw score per contract, for declaring and for doubling.

Each contract has a few hand features (high cards not covered by low ones, voids, the
dangerous cards of the contract, trump length and honours, Domino blocking counts) and a
linear model on them. The coefficients were fitted by least squares on self-play deals of this
bot (see the bench script's docstring); they give the seat's expected raw score, with the
declarer's position (he leads, or moves first in Domino) as one more feature.
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
        "long": sum(max(0, n - 4) * (max(rs) >= 8) for n, rs in zip(lengths, suits) if rs),
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
        below = lambda r: sum(1 for x in rs if x < r)  # noqa: E731
        if QUEEN in rs:
            q_risk += 0.75 ** below(QUEEN) * (1.0 if len(rs) <= 3 else 0.7)
        else:
            for hi in (KING, ACE):
                if hi in rs:
                    catch += 0.7 ** below(hi)
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
    Contract.NO_TRICKS: {"const": 2.55, "decl": -0.69, "ah_only": 1.49, "catch": 0.75, "heart_ace": -0.14, "heart_high": 0.01, "heart_low": -0.20, "heart_risk": -0.82, "hearts": 0.16, "high": -0.27, "kh": 0.07, "kh_bare": 0.30, "long": 0.11, "low": 0.08, "lowest3": -0.52, "queen_risk": 0.46, "queens": 0.22, "risk": -4.20, "side_short": 0.27, "singletons": 0.26, "voids": 1.15},
    Contract.NO_HEARTS: {"const": -7.73, "decl": 0.40, "ah_only": 1.51, "catch": 2.36, "heart_ace": 1.60, "heart_high": 0.45, "heart_low": 0.09, "heart_risk": -4.06, "hearts": 1.60, "high": -0.95, "kh": 0.29, "kh_bare": 0.58, "long": 0.77, "low": 0.46, "lowest3": -2.24, "queen_risk": 2.54, "queens": 0.05, "risk": -1.68, "side_short": -3.03, "singletons": 0.24, "voids": 1.33},
    Contract.NO_QUEENS: {"const": -1.35, "decl": -0.79, "ah_only": -0.59, "catch": -1.15, "heart_ace": 0.10, "heart_high": -0.04, "heart_low": 0.01, "heart_risk": -0.25, "hearts": 0.10, "high": -0.37, "kh": 0.33, "kh_bare": -0.74, "long": 0.79, "low": 0.17, "lowest3": -0.49, "queen_risk": -5.14, "queens": 1.45, "risk": -1.21, "side_short": -0.09, "singletons": 0.23, "voids": -0.68},
    Contract.BARBU: {"const": -4.98, "decl": -0.65, "ah_only": -2.57, "catch": 1.71, "heart_ace": 0.22, "heart_high": -0.18, "heart_low": 0.11, "heart_risk": 3.07, "hearts": 0.95, "high": -0.78, "kh": 5.24, "kh_bare": -9.07, "long": 0.75, "low": 0.21, "lowest3": -0.47, "queen_risk": 1.48, "queens": 0.32, "risk": -2.61, "side_short": -2.47, "singletons": 0.34, "voids": 0.32},
    Contract.NO_LAST_TWO: {"const": -2.85, "decl": 0.68, "ah_only": -0.01, "catch": 1.74, "heart_ace": 0.57, "heart_high": -0.22, "heart_low": -0.28, "heart_risk": 0.81, "hearts": 0.09, "high": 0.16, "kh": 0.90, "kh_bare": -1.57, "long": 0.68, "low": 0.43, "lowest3": -3.28, "queen_risk": 1.98, "queens": -0.26, "risk": -2.49, "side_short": -0.97, "singletons": -0.21, "voids": -1.88},
    Contract.TRUMPS: {"const": -2.88, "decl": 0.40, "aces": 5.02, "kings": 3.60, "queens": 0.92, "short": 3.14, "thon": 1.09, "tlen": 2.59, "tlen_x": 1.71},
    Contract.DOMINO: {"const": 31.01, "decl": -1.17, "blocks": 0.76, "dist": -0.43, "far": -0.61, "starts": -4.19, "waiting": -0.18, "waits": -0.90},
}  # fmt: skip

# Mean of the best estimate for a random hand, as declarer (the yardstick for declaring).
BASELINE: dict[Contract, float] = {Contract.NO_TRICKS: -7.00, Contract.NO_HEARTS: -7.15, Contract.NO_QUEENS: -6.52, Contract.BARBU: -5.48, Contract.NO_LAST_TWO: -7.03, Contract.TRUMPS: 22.39, Contract.DOMINO: 22.01}  # fmt: skip

# Declaring is an assignment problem: 7 hands in a row, each contract once. FUTURE[R] is the
# expected total gain (estimate minus BASELINE) of the best policy over the contracts still in
# R (bit i = STANDARD_CONTRACTS[i]), from a dynamic programme over sampled hands. Naming c now
# is worth gain(c) + FUTURE[R without c]: a good Domino or Trumps hand is worth saving for.
FUTURE = (
    0.00, 0.08, 0.12, 1.41, 0.08, 0.75, 1.57, 2.90, 0.08, 1.32, 1.33, 3.25, 1.37, 2.71, 3.40, 5.21,
    0.10, 1.35, 1.30, 3.24, 1.55, 2.81, 3.52, 5.27, 1.53, 3.35, 3.31, 5.62, 3.52, 5.25, 5.87, 7.97,
    -0.15, 3.19, 3.30, 6.44, 3.00, 5.62, 6.43, 9.09, 2.96, 6.11, 6.20, 9.43, 6.02, 8.73, 9.45, 12.28,
    3.12, 6.24, 6.29, 9.48, 6.27, 8.88, 9.62, 12.36, 6.22, 9.36, 9.43, 12.70, 9.41, 12.17, 12.84, 15.74,
    0.03, 2.50, 3.16, 5.69, 2.36, 4.46, 5.68, 7.95, 2.60, 5.18, 5.61, 8.41, 5.10, 7.43, 8.42, 10.94,
    3.24, 5.64, 6.20, 8.84, 5.66, 7.84, 8.94, 11.33, 5.87, 8.51, 8.91, 11.79, 8.54, 10.97, 11.89, 14.51,
    3.58, 7.61, 8.26, 11.95, 7.34, 10.65, 11.82, 15.02, 7.55, 11.32, 11.80, 15.50, 11.14, 14.41, 15.42, 18.70,
    8.19, 11.77, 12.37, 15.90, 11.69, 14.81, 15.90, 19.05, 11.89, 15.45, 15.93, 19.53, 15.40, 18.59, 19.54, 22.79,
)

# Mean raw score of a declarer who picked the contract (the yardstick for doubling him).
DECLARER_MEAN: dict[Contract, float] = {
    Contract.NO_TRICKS: -4.7, Contract.NO_HEARTS: -4.5, Contract.NO_QUEENS: -5.3, Contract.BARBU: -3.8,
    Contract.NO_LAST_TWO: -4.3, Contract.TRUMPS: 29.7, Contract.DOMINO: 29.0,
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


def choose_declaration(view) -> Declaration:
    """The legal declaration with the best gain now plus the expected gain of what remains."""
    rules, hand = view.rules, view.hand
    standard = rules.contracts == STANDARD_CONTRACTS
    remaining = 0
    if standard:
        for decl in view.legal:
            remaining |= 1 << STANDARD_CONTRACTS.index(decl.contract)
    best, best_value = view.legal[0], float("-inf")
    for decl in view.legal:
        value = estimate(rules, hand, decl, True) - baseline(rules, decl.contract)
        if standard:
            value += FUTURE[remaining & ~(1 << STANDARD_CONTRACTS.index(decl.contract))]
        if value > best_value:
            best, best_value = decl, value
    return best


# ---- doubling -------------------------------------------------------------------------------


def _expected_scores(view) -> list[float]:
    """My estimate for me, the declarer's average for him, the rest shared by the others."""
    rules, decl, me, declarer = view.rules, view.declaration, view.seat, view.declarer
    mine = estimate(rules, view.hand, decl, me == declarer)
    total = rules.contract_total(decl.contract)
    exp = [0.0] * 4
    exp[me] = mine
    if me == declarer:
        for s in range(4):
            if s != me:
                exp[s] = (total - mine) / 3.0
    else:
        d = declarer_mean(rules, decl.contract)
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


def choose_double(view) -> tuple[int, ...]:
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    me, declarer = view.seat, view.declarer
    legal_mask = 0
    forced_mask = 15
    for action in legal:
        m = sum(1 << t for t in action)
        legal_mask |= m
        forced_mask &= m
    exp = _expected_scores(view)
    scale = abs(view.rules.contract_total(view.contract)) / 26.0
    doubled_me = set()
    for seat, targets in view.doubles:
        if me in targets:
            doubled_me.add(seat)
    # forced quota doubles coming soon: doubling the declarer now costs little
    quota_pressure = 0.0
    if me != declarer and view.rules.double_quota > 0:
        need = view.rules.double_quota - view.quota_doubles[me]
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
