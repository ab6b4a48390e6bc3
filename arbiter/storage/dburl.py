"""Database URLs as people may see them: never with their password (messages, the kept file)."""

from __future__ import annotations


def without_password(url: str) -> str:
    """A database URL with its password hidden, for messages and for what is kept of a file."""
    from sqlalchemy.engine import make_url  # here: reading a tournament file needs no SQLAlchemy
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return url
