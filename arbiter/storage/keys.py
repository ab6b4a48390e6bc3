"""Remote entrants' keys in the results database (the key format: arbiter.lobby.keys).

Every call reads the database afresh: a key revoked by ``arbiter key revoke`` is refused at the
next attempt, by a running lobby too. A wrong secret and an unknown key id get the same answer,
so a guesser learns nothing of which key ids exist.
"""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arbiter.lobby.keys import UNKNOWN, check_live, new_key, parse_key
from arbiter.storage.models import EntrantKey, now
from arbiter.storage.rows import checked

__all__ = ["UNKNOWN", "KeyStore"]


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
        check_live(secret, (rows[0].secret_sha256, rows[0].revoked_at) if rows else None)
        return rows[0].entrant
