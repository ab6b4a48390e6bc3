"""Errors a user can act on. The CLI prints their message as one line and exits with their code.

Every error the arbiter raises for a user's mistake (a bad tournament file, an unreadable log, a
database it cannot use) derives from :class:`ArbiterError`, whose ``exit_code`` is what the
command line exits with; :func:`arbiter.cli.common.user_errors` is the one place that turns them
into an ``error:`` line.
"""

from barbu.rules.errors import BarbuError

USAGE = 2  # the input cannot be used as given: fix it and run again
FAILED = 1  # the work itself failed (a tournament's matches, a database)
INTERRUPTED = 130  # Ctrl-C; a stop signal exits with 128 + its number (SIGTERM: 143, SIGHUP: 129)


class ArbiterError(BarbuError):
    """Base of the arbiter's own user-facing errors."""

    exit_code = USAGE


class ConfigError(ArbiterError):
    """A tournament file, option or bot command that cannot be used as given."""


class LogFileError(ArbiterError):
    """A match log that cannot be read or written (missing, unreadable, not UTF-8)."""


class ArbiterStalled(ArbiterError):
    """The arbiter itself kept stalling (stopped, suspended) while a match's bots connected: the
    match is not played, and no bot is charged; a rerun plays it."""

    exit_code = FAILED


class StorageError(ArbiterError):
    """A results database that cannot be used: not ours, newer, a conflicting tournament."""


class LeaseHeld(StorageError):
    """Another run holds the tournament's lease: this one does not start."""


class KeyRefused(ArbiterError):
    """An entrant key that opens nothing (malformed, unknown, revoked). Its message is sent to
    the client as it is, so it never repeats the key."""


class TokenRefused(ArbiterError):
    """An arena author's token that opens nothing (malformed, unknown, revoked). Its message is
    sent to the client as it is, so it never repeats the token."""


class NameTaken(ArbiterError):
    """A name that is someone else's: an arena entrant's name another author used first or a
    house entrant has, an author name already given a live token."""


class SubmissionRefused(ArbiterError):
    """A bot uploaded to an arena that it does not take (an archive over its caps or holding
    links, devices or paths that leave it; an entrant.yaml without a valid name or command). The
    message goes to the bot's author as it is: one line saying what to change."""


class ReportError(ArbiterError):
    """A report that cannot be written (no tournament, an unwritable path)."""


class LobbyRefused(ArbiterError):
    """A lobby that turned ``arbiter connect`` away for good (a wrong or revoked key, a certificate
    it cannot trust, an unsupported version): retrying would not help, the user must act."""

    exit_code = FAILED


class TournamentError(ArbiterError):
    """A tournament that could not be completed (e.g. its workers died)."""

    exit_code = FAILED


class TournamentInterrupted(ArbiterError):
    """A tournament stopped by Ctrl-C or SIGTERM; what was recorded stays, a rerun resumes.

    ``recorded`` counts the matches the database holds; the exit code is 128 + the signal."""

    exit_code = INTERRUPTED

    def __init__(self, recorded: int, total: int, signum: int = 2):
        super().__init__(
            f"interrupted: {recorded} of {total} matches are recorded; run the same command again to finish"
        )
        self.recorded = recorded
        self.total = total
        self.signum = signum
        self.exit_code = 128 + signum
