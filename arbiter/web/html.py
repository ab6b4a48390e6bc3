"""The one way the arbiter writes HTML: Jinja2 templates, escaping every value by default.

Both pages (the match viewer and the tournament report) are a template in ``templates/`` filled
by :func:`render`. A value is escaped unless it is :class:`~markupsafe.Markup`; the only Markup
made here is the package's own stylesheets and scripts (:func:`static`) and the page's data as
JSON made safe inside ``<script>`` (:func:`json_for_script`), so a name, a fault detail or a
log line can never become markup.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

__all__ = ["Markup", "json_for_script", "render", "static"]


@cache
def static(name: str) -> Markup:
    """A stylesheet or script of ``static/``, to be inlined as it is (it is ours, not data); read
    once a process."""
    return Markup(resources.files("arbiter.web").joinpath("static", name).read_text(encoding="utf-8"))


def json_for_script(obj: Any) -> Markup:
    """JSON safe inside <script>: no "</script>", no "<!--", no line separators."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@cache
def environment() -> Environment:
    """Autoescape on for every template; an undefined name is an error, not an empty string."""
    env = Environment(
        loader=PackageLoader("arbiter.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["static"] = static
    return env


def render(template: str, **context: Any) -> str:
    """The page ``templates/<template>`` filled with ``context``."""
    return environment().get_template(template).render(**context)
