"""Seats played from elsewhere: what the match host hands the lobby for a remote entrant's seat.

The match host registers the seat like any other (a session with a one-time token) and, instead
of starting a process, hands an :class:`Invitation` to the seat's :class:`Invitee` (the lobby's
reservation of that entrant, arbiter.lobby.server), which sends it to the entrant. From then on
the seat is an ordinary session: the bot's ``Play`` stream reaches the host through the lobby's
address, so time control, faults, fallback and the log are those of a local match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.remote import BotLiveness


@dataclass(frozen=True)
class Invitation:
    """Everything an entrant needs to play one seat of one match."""

    match_id: str
    seat: int
    token: str  # the seat's one-time token, for the Play stream's Hello
    rules_json: str  # the rules as the log's header holds them
    time_control: TimeControl
    entrants: tuple[str, ...]  # the four entrants' names, by seat


class Invitee(Protocol):
    """A remote entrant reserved for one seat of one match."""

    @property
    def name(self) -> str: ...

    def invite(self, invitation: Invitation) -> BotLiveness:
        """Send the invitation; what the entrant then tells of its bot's process (running,
        ended and how) answers the host's questions about the seat, as a local process would."""
