"""The secrets a results database gives out, of two kinds with one face (:class:`Credentials`):
a remote entrant's keys (``bk1.…``, any number per entrant) and an arena author's token
(``ba1.…``, one live per author). The format and the constant-time check are
arbiter.lobby.keys'; the database keeps a secret's id and SHA-256, never the secret.

Every call reads the database afresh: a revocation applies to the next attempt, by a running
lobby or arena too. A wrong secret and an unknown id get the same answer, so a guesser learns
nothing of which ids exist.

An author's token is checked in two steps, so that whoever counts failed attempts can count them
per author (arbiter.arena.tokens): :meth:`AuthorTokens.find` reads the row its id names, and
:meth:`AuthorTokens.check` compares its secret in constant time. A browser session (the author's
corner) holds its author's name, its token's id and the author's ``session_epoch`` when it
began; it is live while the author's row still has that token, not revoked, at that epoch: a
revocation, a new token or a logout (which adds one to the epoch) ends it, whatever the cookie
says, across restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arbiter.errors import NameTaken
from arbiter.lobby.keys import AUTHOR_PREFIX, PREFIX, check_live, new_key, parse_key
from arbiter.storage.db import writing
from arbiter.storage.models import Author, EntrantKey, now
from arbiter.storage.rows import checked

__all__ = ["AuthorToken", "AuthorTokens", "Credentials", "EntrantKeys"]


class Credentials(Protocol):
    """Secrets given out to named holders: one face for both kinds."""

    prefix: str

    def issue(self, holder: str) -> str:
        """A new secret for ``holder``: the whole text, which is stored nowhere."""

    def revoke(self, holder: str) -> int:
        """Revoke ``holder``'s live secrets; how many there were."""

    def holder_of(self, text: str) -> str:
        """Whose live secret ``text`` is; else KeyRefused/TokenRefused, never repeating it."""


class EntrantKeys:
    """Remote entrants' keys: any number live per entrant."""

    prefix = PREFIX

    def __init__(self, engine: Engine):
        self.engine = engine

    def issue(self, holder: str) -> str:
        key_id, digest, text = new_key()
        with Session(self.engine) as session:
            session.add(EntrantKey(key_id=key_id, entrant=holder, secret_sha256=digest))
            session.commit()
        return text

    def revoke(self, holder: str) -> int:
        with self.engine.begin() as connection:
            return connection.execute(
                update(EntrantKey)
                .where(col(EntrantKey.entrant) == holder, col(EntrantKey.revoked_at).is_(None))
                .values(revoked_at=now())
            ).rowcount

    def holder_of(self, text: str) -> str:
        key_id, secret = parse_key(text)
        with Session(self.engine) as session:
            rows = checked(session, select(EntrantKey).where(EntrantKey.key_id == key_id))
        check_live(secret, (rows[0].secret_sha256, rows[0].revoked_at) if rows else None)
        return rows[0].entrant


@dataclass(frozen=True)
class AuthorToken:
    """An author's row as a token check needs it."""

    name: str
    token_id: str
    token_sha256: str
    revoked_at: datetime | None
    session_epoch: int


class AuthorTokens:
    """Arena authors' tokens: one live per author."""

    prefix = AUTHOR_PREFIX

    def __init__(self, engine: Engine):
        self.engine = engine

    def issue(self, holder: str) -> str:
        """A token for a new author ``holder`` (or a revoked one: the old token stays refused): the
        whole token text, which is stored nowhere; the database keeps its id and the hash of its
        secret. An author with a live token is refused: revoke it first."""
        token_id, digest, token = new_key(AUTHOR_PREFIX)
        taken = NameTaken(
            f"author {holder!r} already has a live token: `arbiter author revoke {holder}` first, then add the author "
            "again for a new one"
        )
        try:
            with writing(self.engine) as session:
                found = checked(session, select(Author).where(Author.name == holder))
                if found and found[0].revoked_at is None:
                    raise taken
                author = Author(name=holder, token_id=token_id, token_sha256=digest)
                if found:  # a revoked author: a new token in the same row
                    author = found[0]
                    author.token_id, author.token_sha256 = token_id, digest
                    author.created_at, author.revoked_at = now(), None
                session.add(author)
        except IntegrityError:  # added by another process at the same moment
            raise taken from None
        return token

    def revoke(self, holder: str) -> int:
        """Revoke author ``holder``'s live token; how many there were (0 or 1)."""
        with self.engine.begin() as connection:
            return connection.execute(
                update(Author)
                .where(col(Author.name) == holder, col(Author.revoked_at).is_(None))
                .values(revoked_at=now())
            ).rowcount

    def holder_of(self, text: str) -> str:
        return self.check(*self.find(text)).name

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
