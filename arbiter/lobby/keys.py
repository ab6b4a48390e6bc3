"""Entrant keys: what a remote entrant proves itself with (no storage, no sockets).

A key reads ``bk1.<key_id>.<secret>``: ``key_id`` (16 hex digits) is public and finds the key's
row; ``secret`` (43 URL-safe base64 characters) carries 256 random bits and is never stored:
the database keeps its SHA-256 only. A plain hash is enough for a secret this random (no
password to guess); it is compared in constant time. Every refusal's message is safe to send
to the client: it never repeats what the client sent.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from arbiter.errors import KeyRefused

PREFIX = "bk1"  # the key format's version
KEY_ID_BYTES = 8  # shown as 16 hex digits
SECRET_BYTES = 32  # 256 bits; shown as 43 URL-safe base64 characters
MAX_KEY_CHARS = 256  # a longer text is refused before anything else is done with it
_KEY_RE = re.compile(r"bk1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})", re.ASCII)
MALFORMED = "malformed key: an entrant key looks like bk1.<16 hex digits>.<43 letters, digits, '-' or '_'>"


def new_key() -> tuple[str, str, str]:
    """A fresh key: ``(key_id, SHA-256 of the secret in hex, the whole key text)``."""
    key_id = secrets.token_hex(KEY_ID_BYTES)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    return key_id, secret_sha256(secret), f"{PREFIX}.{key_id}.{secret}"


def parse_key(text: str) -> tuple[str, str]:
    """``(key_id, secret)`` of a key text (spaces and line ends around it are ignored: a key
    file may end with a newline); else :class:`KeyRefused`."""
    if len(text) > MAX_KEY_CHARS:
        raise KeyRefused(MALFORMED)
    match = _KEY_RE.fullmatch(text.strip())
    if match is None:
        raise KeyRefused(MALFORMED)
    return match.group(1), match.group(2)


def secret_sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_sha256: str) -> bool:
    """Whether ``secret`` hashes to ``stored_sha256``, in time that does not depend on where they differ."""
    return hmac.compare_digest(secret_sha256(secret).encode(), stored_sha256.encode("utf-8", "replace"))
