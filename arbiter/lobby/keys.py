"""Entrant keys and author tokens: what a remote entrant or an arena's author proves itself
with (no storage, no sockets).

A key reads ``<prefix>.<key_id>.<secret>``: the prefix names the format's version and what the
key opens (``bk1``: an entrant key, the default; ``ba1``: an arena author's token); ``key_id``
(16 hex digits) is public and finds the key's row; ``secret`` (43 URL-safe base64 characters)
carries 256 random bits and is never stored: the database keeps its SHA-256 only. A plain hash is
enough for a secret this random (no password to guess); it is compared in constant time. Every
refusal's message is safe to send to the client: it never repeats what the client sent.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from arbiter.errors import ArbiterError, KeyRefused, TokenRefused

PREFIX = "bk1"  # entrant keys (the lobby's), format version 1
AUTHOR_PREFIX = "ba1"  # arena authors' tokens, format version 1
KEY_ID_BYTES = 8  # shown as 16 hex digits
SECRET_BYTES = 32  # 256 bits; shown as 43 URL-safe base64 characters
MAX_KEY_CHARS = 256  # a longer text is refused before anything else is done with it


@dataclass(frozen=True)
class _Format:
    what: str  # "entrant key": how messages name it
    refused: type[ArbiterError]  # what a key of this format that opens nothing raises
    pattern: re.Pattern[str]

    @property
    def word(self) -> str:  # "key"
        return self.what.split()[-1]


def _format(prefix: str, what: str, refused: type[ArbiterError]) -> _Format:
    return _Format(what, refused, re.compile(rf"{prefix}\.([0-9a-f]{{16}})\.([A-Za-z0-9_-]{{43}})", re.ASCII))


_FORMATS = {
    PREFIX: _format(PREFIX, "entrant key", KeyRefused),
    AUTHOR_PREFIX: _format(AUTHOR_PREFIX, "author token", TokenRefused),
}


def malformed(prefix: str = PREFIX) -> str:
    f = _FORMATS[prefix]
    return f"malformed {f.word}: an {f.what} looks like {prefix}.<16 hex digits>.<43 letters, digits, '-' or '_'>"


def unknown(prefix: str = PREFIX) -> str:
    word = _FORMATS[prefix].word
    return f"unknown {word}: check the {word} file, or ask the organiser for a {word}"


MALFORMED = malformed()
UNKNOWN = unknown()


def new_key(prefix: str = PREFIX) -> tuple[str, str, str]:
    """A fresh key: ``(key_id, SHA-256 of the secret in hex, the whole key text)``."""
    assert prefix in _FORMATS, prefix
    key_id = secrets.token_hex(KEY_ID_BYTES)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    return key_id, secret_sha256(secret), f"{prefix}.{key_id}.{secret}"


def parse_key(text: str, prefix: str = PREFIX) -> tuple[str, str]:
    """``(key_id, secret)`` of a key text (spaces and line ends around it are ignored: a key
    file may end with a newline); else the format's error (:class:`KeyRefused` for an entrant
    key, :class:`TokenRefused` for an author token)."""
    f = _FORMATS[prefix]
    if len(text) > MAX_KEY_CHARS:
        raise f.refused(malformed(prefix))
    match = f.pattern.fullmatch(text.strip())
    if match is None:
        raise f.refused(malformed(prefix))
    return match.group(1), match.group(2)


def check_live(secret: str, stored: tuple[str, datetime | None] | None, prefix: str = PREFIX) -> None:
    """Refuse ``secret`` unless its key's row (``stored``: the SHA-256 of its secret and when it
    was revoked; None: no row has its key id) holds its hash and is not revoked. A wrong secret
    and an unknown key id get the same answer, so a guesser learns nothing of which ids exist."""
    f = _FORMATS[prefix]
    if stored is None or not secret_matches(secret, stored[0]):
        raise f.refused(unknown(prefix))
    revoked_at = stored[1]
    if revoked_at is not None:
        when = revoked_at.replace(tzinfo=UTC) if revoked_at.tzinfo is None else revoked_at
        raise f.refused(
            f"this {f.word} was revoked on {when.astimezone(UTC):%Y-%m-%d %H:%M} UTC: ask the organiser for a new one"
        )


def secret_sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_sha256: str) -> bool:
    """Whether ``secret`` hashes to ``stored_sha256``, in time that does not depend on where they differ."""
    return hmac.compare_digest(secret_sha256(secret).encode(), stored_sha256.encode("utf-8", "replace"))
