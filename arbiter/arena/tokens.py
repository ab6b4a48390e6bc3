"""Author tokens presented over HTTP (the API's ``Authorization`` header, the corner's login),
with failed attempts counted per address *and author*.

A guess names a token id, and failures are counted under (the client's address, the author
that id names), or under (the address, nobody) for an id no author has and for a text that is
not a token at all. After ``max_failures`` in the window (:class:`FailureLimiter`), further
attempts under that pair wait (:class:`TooManyAttempts`, 429) before anything is compared.
So a guesser is slowed down, and the owner is not locked out by it: a guesser who does not hold
the owner's token id (it is never shown to anyone but the owner) fills only (its address,
nobody), and the owner's right token, from any address, the guesser's own included, names the
owner and is checked. Only someone who already holds the owner's token id can slow the owner
down, and only from its own address (behind a shared address, such as one proxy for everyone:
the arena file's ``proxies`` key gives each client its own).

That a blocked guesser gets 429 for an id no author has and 401 for an author's id tells it
which ids exist; ids are 64 random bits and carry nothing without the 256-bit secret
(arbiter.lobby.keys), so that is worth nothing to it.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from arbiter.errors import ArbiterError, TokenRefused
from arbiter.lobby.ratelimit import FailureLimiter, address_of
from arbiter.storage.credentials import AuthorToken, AuthorTokens

__all__ = ["TokenCheck", "TooManyAttempts", "client_address"]

NOBODY = ""  # the author of an id no author has, or of a text that is not a token


class TooManyAttempts(ArbiterError):
    """A client address that gave too many wrong tokens lately: it waits ``retry_after`` seconds."""

    def __init__(self, retry_after: float):
        super().__init__(f"too many failed token attempts from this address: try again in {retry_after:.0f} s")
        self.retry_after = retry_after


def client_address(host: str) -> str:
    """The address failed tokens count under (IPv6: its /64), from an HTTP client's host."""
    return address_of(f"ipv6:[{host}]:0" if ":" in host else f"ipv4:{host}:0")


class TokenCheck:
    """Checks author tokens against the database, counting failures in ``limiter`` per
    (address, author) as the module's docstring says."""

    def __init__(self, engine: Engine, limiter: FailureLimiter | None = None):
        self.authors = AuthorTokens(engine)
        self.limiter = limiter or FailureLimiter()

    def check(self, token: str, client: str) -> AuthorToken:
        """The author row ``token`` opens; else TokenRefused (counted) or TooManyAttempts."""
        refused: TokenRefused | None = None
        try:
            secret, found = self.authors.find(token)
        except TokenRefused as e:  # not a token at all
            refused, secret, found = e, "", None
        key = f"{client_address(client)} {found.name if found is not None else NOBODY}"
        wait = self.limiter.blocked(key)
        if wait is not None:
            raise TooManyAttempts(wait)
        try:
            if refused is not None:
                raise refused
            return self.authors.check(secret, found)
        except TokenRefused:
            self.limiter.failed(key)
            raise
