"""HTML pages, each one self-contained file: the match viewer (``viewer``) and the tournament
report (``report/``). Both are Jinja2 templates in ``templates/`` filled by :mod:`.html`, which
escapes every value; their stylesheets and scripts are package files in ``static/``."""

from __future__ import annotations

from arbiter.web.viewer import build_data, render_html, write_html

__all__ = ["build_data", "render_html", "write_html"]
