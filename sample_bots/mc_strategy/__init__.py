"""Search behind ``sample_bots/mc_bot.py``: determinized Monte-Carlo on the engine and the sampler.

* :mod:`barbu.rollout` (the SDK's, compiled with the engine) — the greedy playout policy, on engine masks.
* :mod:`.search` — card play: every legal card against sampled deals; the anytime clock and the
  paired statistics that keep the heuristic's choice unless simulation clearly beats it.
* :mod:`.bidding` — declaring and doubling by simulation.
* :mod:`.model` — the heuristic's hand evaluation and doubling rule, fast, as a model of others.
* :mod:`.belief` — importance weights: how well a sampled deal explains the public bidding.
"""

from .bidding import choose_declaration, choose_double
from .search import choose_play

__all__ = ["choose_declaration", "choose_double", "choose_play"]
