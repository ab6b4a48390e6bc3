"""Arena authors' tokens and browser sessions in the results database.

A token is checked in two steps, so that whoever counts failed attempts can count them per
author (arbiter.arena.tokens): :meth:`AuthorTokens.find` reads the row its id names, and
:meth:`AuthorTokens.check` compares its secret in constant time. A wrong secret and an unknown
id get the same answer (arbiter.lobby.keys).

A browser session (the author's corner) holds its author's name, its token's id and the
author's ``session_epoch`` when it began; it is live while the author's row still has that
token, not revoked, at that epoch: a revocation, a new token or a logout (which adds one to
the epoch) ends it, whatever the cookie says, across restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arbiter.lobby.keys import AUTHOR_PREFIX, check_live, parse_key
from arbiter.storage.models import Author
from arbiter.storage.rows import checked

__all__ = ["AuthorToken", "AuthorTokens"]


@dataclass(frozen=True)
class AuthorToken:
    """An author's row as a token check needs it."""

    name: str
    token_id: str
    token_sha256: str
    revoked_at: datetime | None
    session_epoch: int


class AuthorTokens:
    """Every call reads the database afresh: a revocation applies to the next request."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def find(self, token_text: str) -> tuple[str, AuthorToken | None]:
        """The secret of ``token_text`` and the row its id names (None: no author has that id);
        :class:`~arbiter.errors.TokenRefused` for a text that is not a token."""
        token_id, secret = parse_key(token_text, AUTHOR_PREFIX)
        with Session(self.engine) as session:
            found = checked(session, select(Author).where(Author.token_id == token_id))
        if not found:
            return secret, None
        row = found[0]
        return secret, AuthorToken(row.name, row.token_id, row.token_sha256, row.revoked_at, row.session_epoch)

    @staticmethod
    def check(secret: str, found: AuthorToken | None) -> AuthorToken:
        """``found`` if ``secret`` is its live token's; else TokenRefused (never repeating the token)."""
        check_live(secret, (found.token_sha256, found.revoked_at) if found else None, AUTHOR_PREFIX)
        assert found is not None
        return found

    def session_live(self, author: str, token_id: str, epoch: int) -> bool:
        """Whether a session of ``author`` begun with token ``token_id`` at ``epoch`` is still live."""
        with Session(self.engine) as session:
            found = checked(session, select(Author).where(Author.name == author))
        if not found:
            return False
        row = found[0]
        return row.revoked_at is None and row.token_id == token_id and row.session_epoch == epoch

    def end_sessions(self, author: str, token_id: str) -> None:
        """End every session of ``author`` begun with token ``token_id`` (a logout)."""
        with self.engine.begin() as connection:
            connection.execute(
                update(Author)
                .where(col(Author.name) == author, col(Author.token_id) == token_id)
                .values(session_epoch=col(Author.session_epoch) + 1)
            )
