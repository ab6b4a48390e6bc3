"""Verdicts between two bots: the sequential test on per-deal-set score differences (``sprt``,
standard library only) and the A/B run that feeds it duplicate deal sets (``ab``)."""

MATCHES_PER_SET = 8  # A's 4 rotations, then B's 4
DEFAULT_DELTA0 = 0.0  # points per match
DEFAULT_DELTA1 = 30.0  # under standard rules a per-set SD near 100 makes this ~50 sets at δ0
DEFAULT_MAX_MATCHES = 2000  # 250 sets
