"""Verdicts between two bots: the sequential test on per-deal-set score differences (``sprt``,
standard library only) and the A/B run that feeds it duplicate deal sets (``ab``)."""
