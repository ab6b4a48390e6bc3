"""Remote entrants' keys in the results database (the key format: arbiter.lobby.keys).

Every call reads the database afresh: a key revoked by ``arbiter key revoke`` is refused at the
next attempt, by a running lobby too. A wrong secret and an unknown key id get the same answer,
so a guesser learns nothing of which key ids exist.
"""

from __future__ import annotations

from datetime import UTC

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arbiter.errors import KeyRefused
from arbiter.lobby.keys import new_key, parse_key, secret_matches
from arbiter.tournament.storage.models import EntrantKey, now
from arbiter.tournament.storage.rows import checked

UNKNOWN = "unknown key: check the key file, or ask the organiser for a key"


class KeyStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    def issue(self, entrant: str) -> str:
        """A new key for ``entrant`` (its other keys stay live): the whole key text, which is
        stored nowhere; the database keeps its id and the hash of its secret."""
        key_id, digest, text = new_key()
        with Session(self.engine) as session:
            session.add(EntrantKey(key_id=key_id, entrant=entrant, secret_sha256=digest))
            session.commit()
        return text

    def revoke(self, entrant: str) -> int:
        """Revoke every live key of ``entrant``; how many there were."""
        with self.engine.begin() as connection:
            return connection.execute(
                update(EntrantKey)
                .where(col(EntrantKey.entrant) == entrant, col(EntrantKey.revoked_at).is_(None))
                .values(revoked_at=now())
            ).rowcount

    def entrant_of(self, key_text: str) -> str:
        """The name of the entrant whose live key ``key_text`` is; else :class:`KeyRefused`."""
        key_id, secret = parse_key(key_text)
        with Session(self.engine) as session:
            rows = checked(session, select(EntrantKey).where(EntrantKey.key_id == key_id))
        if not rows or not secret_matches(secret, rows[0].secret_sha256):
            raise KeyRefused(UNKNOWN)
        row = rows[0]
        if row.revoked_at is not None:
            when = row.revoked_at.replace(tzinfo=UTC) if row.revoked_at.tzinfo is None else row.revoked_at
            raise KeyRefused(
                f"this key was revoked on {when.astimezone(UTC):%Y-%m-%d %H:%M} UTC: ask the organiser for a new one"
            )
        return row.entrant
