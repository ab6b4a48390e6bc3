"""One table: a person against three bots, played by a match host like any match.

:class:`HumanTable` seats the person (:class:`~arbiter.human.seat.HumanInvitee`) and three bot
commands, plays the match in an event loop of its own (the blocking edge's
:class:`~arbiter.match.blocking.LoopThread`), and publishes everything the page shows on its
:class:`~arbiter.human.seat.TableBoard`: the person's table while it plays, then how the match
ended, its log's verdict and where its replay is. A person's match is any match: its time
control (a person's, longer: :data:`HUMAN_TIME`), fault policy and log are the host's.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.human.seat import HumanInvitee, TableBoard, seat_names, time_control_json
from arbiter.match.blocking import LoopThread, result_of
from arbiter.match.play import BotMatch, BotSpec, MatchHost, MatchOptions
from arbiter.model import Limits
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.loop import MatchSetup
from arbiter.referee.timecontrol import TimeControl

__all__ = ["ABANDON_SECONDS", "HUMAN_TIME", "HumanTable", "TableSpec"]

log = logging.getLogger(__name__)

# A person's time control: a minute a decision, ten minutes of reserve; a whole match of 28 deals
# may take hours (the watchdog is a day).
HUMAN_TIME = TimeControl(per_decision=60.0, reserve=600.0, connect=10.0, match_limit=86400.0)
# A closed tab: once no page has asked for the table this long while a decision waits, the seat
# leaves (its stream ends) and forfeits at once, instead of timing out decision after decision.
ABANDON_SECONDS = 90.0


@dataclass(frozen=True)
class TableSpec:
    """Who sits where and how the match is played."""

    bots: tuple[BotSpec, BotSpec, BotSpec]
    setup: MatchSetup
    log_path: Path
    person: str = "you"
    seat: int = 0
    time_control: TimeControl = HUMAN_TIME
    max_strikes: int = 3
    abandon: float | None = ABANDON_SECONDS  # no page open that long, a decision pending: the seat forfeits
    isolation: str = "none"
    limits: Limits = Limits()
    replace: bool = False


class HumanTable:
    """A person's match (see the module's docstring): :meth:`start` it, watch :attr:`board`,
    :meth:`wait` for its :class:`BotMatch`, :meth:`close` it."""

    def __init__(self, spec: TableSpec):
        self.spec = spec
        names = seat_names(spec.person, [b.name for b in spec.bots], spec.seat)
        self.board = TableBoard(
            {
                "status": "starting",
                "seat": spec.seat,
                "names": names,
                "time_control": time_control_json(spec.time_control),
                "max_strikes": spec.max_strikes,
                "abandon": spec.abandon,
                "view": None,
                "request": None,
                "notes": [],
                "ended": None,
            }
        )
        self.host = MatchHost()
        self.invitee = HumanInvitee(spec.person, self.board, self._address, spec.abandon)
        self._thread: LoopThread | None = None
        self._future: Future[BotMatch] | None = None
        self.played: BotMatch | None = None
        self.finished = threading.Event()

    def _address(self) -> str:
        assert self.host.server is not None, "the person is invited once the host listens"
        return self.host.server.address

    def start(self) -> None:
        """Start the match in a loop of its own; it runs until it ends or :meth:`close`."""
        spec = self.spec
        entrants: list[BotSpec | HumanInvitee] = list(spec.bots)
        entrants.insert(spec.seat, self.invitee)
        options = MatchOptions(
            time_control=spec.time_control,
            fault_policy=FaultPolicy(spec.max_strikes),
            isolation=spec.isolation,
            limits=spec.limits,
            replace=spec.replace,
        )
        self._thread = LoopThread("barbu-table")
        self._future = self._thread.submit(self._play(entrants, options))

    async def _play(self, entrants: list[BotSpec | HumanInvitee], options: MatchOptions) -> BotMatch:
        try:
            played = await self.host.play(entrants, self.spec.setup, self.spec.log_path, options)
            self.played = played
            self.board.update(status="over", request=None, ended=ended_json(played))
            return played
        except BaseException as e:
            self.board.update(status="failed", request=None, ended={"error": str(e) or type(e).__name__})
            raise
        finally:
            await self.host.close()
            self.finished.set()

    def wait(self, timeout: float | None = None) -> BotMatch:
        """The played match, once over (its exception, if it failed)."""
        assert self._future is not None, "start() first"
        return result_of(self._future, timeout)

    def close(self) -> None:
        """Stop the match if it still runs (its bots are killed, no log is left) and the loop."""
        if self._thread is not None:
            if self._future is not None and not self._future.done():
                self._future.cancel()
                self.finished.wait(30)
            self._thread.close()


def ended_json(played: BotMatch) -> dict[str, Any]:
    """How the match ended, as the page's end-of-match summary shows it."""
    from arbiter.referee.logfile import read_log_lines
    from arbiter.replay.model import load_replay

    r = played.result
    verdict = load_replay(read_log_lines(played.log_path)).verdict()
    return {
        "status": r.status,
        "reason": r.reason,
        "totals": list(r.totals),
        "places": list(r.places),
        "forfeits": list(r.forfeits),
        "faults": [{"seat": f.seat, "deal": f.deal + 1, "kind": str(f.kind), "detail": f.detail} for f in r.faults],
        "log": str(played.log_path),
        "verdict": verdict,
    }
