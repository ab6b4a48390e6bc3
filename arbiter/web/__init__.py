"""The HTML match viewer: one self-contained page per match log.

:func:`write_html` turns a :class:`arbiter.replay.Replay` into a single HTML file with its CSS,
its JavaScript and its data inline (no network access at all). The data are the log itself
plus one precomputed snapshot per step (hands left, the trick or Domino layout, pair levels,
scores), so the page only draws: stepping is instant even through a full 28-deal match.

The template, stylesheet and script are package files in ``arbiter/web/static/``.
"""

from __future__ import annotations

from .page import build_data, render_html, write_html

__all__ = ["build_data", "render_html", "write_html"]
