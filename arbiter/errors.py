"""Errors a user can act on. The CLI prints their message as one line and exits non-zero."""

from barbu.rules.errors import BarbuError


class ArbiterError(BarbuError):
    """Base of the arbiter's own user-facing errors."""


class ConfigError(ArbiterError):
    """A tournament file, option or bot command that cannot be used as given."""


class LogFileError(ArbiterError):
    """A match log that cannot be read or written (missing, unreadable, not UTF-8)."""
