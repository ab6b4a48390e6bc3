"""The arena's read model and write side: what the API (arbiter.arena.api) serves and accepts.

The ladder is one tournament row named after the arena; its entrants are versions named
``NAME@VERSION``; the ``submissions`` table (:class:`arbiter.storage.arena.ArenaStore`)
says which versions exist, who wrote them and which are active. Ratings (TrueSkill and the margin
rating), mean scores and faults are the tournament's own, as its standings table keeps them, read
(and the margin ratings solved) once per new match and shared by every request until the next; per-contract scores and the doubling record
come from the match logs, read as the tournament report reads them (only a log of the arena's
folder with its recorded SHA-256) and summed in one pass by the report's own
:class:`arbiter.web.report.stats.Analysis`.

Every write needs an author's token; failed tokens are counted per client address and author
(arbiter.arena.tokens) and an address that failed too often waits. Uploads are taken, within the
arena's quotas, by :class:`arbiter.arena.quotas.Uploads`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from arbiter.arena.matchmaking import SWISS_START
from arbiter.errors import ArbiterError
from arbiter.files import FileTooLarge, human_size, read_bounded
from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.model import ScheduledMatch, Tally
from arbiter.storage import Repo, row_id
from arbiter.storage.arena import ArenaStore, SubmissionRow
from arbiter.storage.models import Fault, Match, SeatResult, Tournament
from arbiter.storage.rows import checked
from arbiter.tournament.margins import solve
from arbiter.tournament.ratings import MU, SIGMA, Standing, ranked, with_margins
from arbiter.tournament.recorded import read_match_log
from arbiter.tournament.standings import TREND_POINTS, fresh, standing_of

from .quotas import Uploads
from .shaping import (
    contract_scores,
    doubling_record,
    fault_view,
    house_version_view,
    live_view,
    match_summary,
    rating_fields,
    rating_point,
    split_version,
    submission_view,
    utc,
    version_view,
)
from .tokens import TokenCheck
from .views import (
    ArenaState,
    ContractScores,
    Doubling,
    EntrantView,
    FaultView,
    Leaderboard,
    LeaderboardRow,
    LiveMatch,
    MatchDetail,
    MatchPage,
    MatchSummary,
    RatingPoint,
    SubmissionView,
    public_id,
)

MAX_PAGE = 200  # matches per page of GET /api/matches
RECENT_MATCHES = 20  # an entrant page's recent matches, and the logs its contract scores read
RECENT_FAULTS = 50
MAX_STDERR_BYTES = 4 << 20  # a seat's captured output is capped when written; this bounds the read


class NotFound(ArbiterError):
    """Nothing by that id or name (or nothing this caller may see: the API never says which)."""


class LogGone(ArbiterError):
    """A recorded match's log is no longer the one recorded (changed, unreadable)."""


class NotYours(ArbiterError):
    """An author acting on another author's (or the house's) entrant."""


class NothingToRetire(ArbiterError):
    """The author's entrant has no active version."""


class UploadTooLarge(ArbiterError):
    """An upload over the arena's archive limit."""


class ArenaService:
    """The arena's data for the API, and the writes it passes on.

    ``house``: the house entrants' NAMEs (the arena file's commands; each plays as ``NAME@1``,
    belongs to nobody and is always active). ``uploads`` takes submissions (its limits'
    ``archive`` caps an upload's bytes); ``in_flight()`` counts the matches being played;
    ``in_play()`` lists them (scheduled, not recorded); ``paused()`` says why the arena is paused (its disk), if it is; ``limiter`` counts failed tokens."""

    def __init__(
        self,
        engine: Engine,
        arena: str,
        log_folder: Path,
        *,
        uploads: Uploads,
        house: Sequence[str] = (),
        in_flight: Callable[[], int] = lambda: 0,
        in_play: Callable[[], Sequence[ScheduledMatch]] = list,
        paused: Callable[[], str | None] = lambda: None,
        limiter: FailureLimiter | None = None,
        rating: str = "trueskill",
        provisional: int = SWISS_START,
    ):
        self.repo = Repo(engine)
        self.store = ArenaStore(engine)
        self.arena = arena
        self.log_folder = log_folder.resolve()
        self.house = tuple(house)
        self.uploads = uploads
        self.upload_limit = uploads.limits.archive
        self.tokens = TokenCheck(engine, limiter)
        self._in_flight = in_flight
        self._in_play = in_play
        self._paused = paused
        self._lock = threading.Lock()
        self._computing = threading.Lock()  # one replay at a time (a table missing or behind)
        self._tallies: tuple[tuple[int, int, int | None], dict[str, Tally]] | None = None
        self.rating, self.provisional = rating, provisional  # the leaderboard's order; a provisional standing
        self._standings: tuple[dict[str, Tally], dict[str, Standing]] | None = None  # the tallies solved, their table

    # ---- the ladder ------------------------------------------------------------------------
    def _tournament(self) -> Tournament | None:
        with self.repo.reading(f"arena {self.arena!r}"):
            return self.repo.tournament(self.arena)

    def active(self) -> dict[str, str | None]:
        """The active versions (``NAME@VERSION``) with their authors (None: the house)."""
        out: dict[str, str | None] = {f"{name}@1": None for name in self.house}
        for row in self.store.active(self.arena):
            out[f"{row.entrant}@{row.version}"] = row.author
        return out

    def _table(self, t: Tournament | None, extra: Sequence[str] = ()) -> dict[str, Standing]:
        """Every version's standing (those of ``extra`` too, unplayed ones at the start): the
        kept tallies with their margin ratings, solved once per recorded match."""
        unplayed = {name: Standing(name, MU, SIGMA) for name in extra}
        ranked(unplayed.values(), self.rating, self.provisional)
        if t is None:
            return unplayed
        tallies = self._kept(t)
        with self._lock:
            solved = self._standings
        if solved is None or solved[0] is not tallies:
            rows = {name: standing_of(tally) for name, tally in tallies.items()}
            with_margins(rows.values(), solve(list(rows), {name: t.margin for name, t in tallies.items()}))
            ranked(rows.values(), self.rating, self.provisional)
            solved = (tallies, rows)
            with self._lock:
                self._standings = solved
        return {**unplayed, **solved[1]}

    def _kept(self, t: Tournament) -> dict[str, Tally]:
        """Every version's tally as the standings table keeps it (the recorder writes it with each
        match: nothing is replayed here), read again only when a match was recorded since."""
        t_id = row_id(t)
        with self.repo.reading(f"arena {self.arena!r}"):
            key = self._recorded(t_id)
            with self._lock:
                if self._tallies is not None and self._tallies[0] == key:
                    return self._tallies[1]
            mark, tallies = self.repo.standings(t_id)
            if mark is None or mark.matches < key[1]:  # missing or behind: the ladder's start rebuilds it
                tallies = self._replayed(t, key)
        with self._lock:
            self._tallies = (key, tallies)
        return tallies

    def _replayed(self, t: Tournament, key: tuple[int, int, int | None]) -> dict[str, Tally]:
        """The tallies replayed from the stored matches (only while the table is missing or behind,
        before the ladder's start has rebuilt it), by one request at a time."""
        from arbiter.tournament.kept import stored_schedule
        from arbiter.tournament.standings import Keeper

        with self._computing:
            with self._lock:
                if self._tallies is not None and self._tallies[0] == key:
                    return self._tallies[1]
            t_id = row_id(t)
            rows = self.repo.match_rows(t_id)
            keeper = Keeper(self.repo.entrant_names(t_id), duplicate=True, double_scoring="")
            keeper.schedule(stored_schedule(rows, True))
            keeper.replay({r.number: r for r in self.repo.matches(t_id)}, {r.number: r.finished_at for r in rows}, {})
            return keeper.tallies

    def _recorded(self, t_id: int) -> tuple[int, int, int | None]:
        """What changes whenever a match is recorded: what a computed view is kept by."""
        with self.repo.session() as s:
            count, last = s.exec(
                select(func.count(), func.max(Match.id)).select_from(Match).where(Match.tournament_id == t_id)
            ).one()
        return t_id, count, last

    def leaderboard(self) -> Leaderboard:
        active = self.active()
        t = self._tournament()
        table = self._table(t, list(active))
        rows = ranked([replace(table[v]) for v in active], self.rating, self.provisional)
        board = []
        for rank, s in enumerate(rows, start=1):
            name, version = split_version(s.name)
            board.append(
                LeaderboardRow(rank=rank, name=name, version=version, author=active[s.name], **rating_fields(s))
            )
        return Leaderboard(arena=self.arena, matches=self._count(t), rating=self.rating, entrants=board)

    def _count(self, t: Tournament | None, since: datetime | None = None) -> int:
        if t is None:
            return 0
        query = select(func.count()).select_from(Match).where(Match.tournament_id == row_id(t))
        if since is not None:
            query = query.where(col(Match.finished_at) >= utc(since))
        with self.repo.reading(f"arena {self.arena!r}"), self.repo.session() as s:
            return s.exec(query).one()

    def state(self) -> ArenaState:
        t = self._tournament()
        hour_ago = datetime.now(UTC) - timedelta(hours=1)
        return ArenaState(
            arena=self.arena,
            matches=self._count(t),
            in_flight=self._in_flight(),
            last_hour=self._count(t, hour_ago),
            active=len(self.active()),
            paused=self._paused(),
        )

    def trends(self, points: int = TREND_POINTS) -> dict[str, list[float]]:
        """Each version's (``NAME@VERSION``) last ``points`` values of μ, oldest first: the
        leaderboard's small trend lines, as the standings table keeps them."""
        t = self._tournament()
        if t is None:
            return {}
        return {name: list(tally.trend[-points:]) for name, tally in self._kept(t).items() if tally.trend}

    # ---- matches ---------------------------------------------------------------------------
    def live(self) -> list[LiveMatch]:
        """The matches in play now (or waiting for a slot), the lowest id first."""
        return [live_view(m) for m in sorted(self._in_play(), key=lambda m: m.number)]

    def _versions_of(self, t_id: int, entrant: str) -> dict[int, str]:
        """The tournament's entrant rows (id -> NAME@VERSION) that are ``entrant``: a NAME (every
        version) or one NAME@VERSION."""
        by_id = self.repo.entrants_by_id(t_id)
        if "@" in entrant:
            return {i: n for i, n in by_id.items() if n == entrant}
        return {i: n for i, n in by_id.items() if split_version(n)[0] == entrant}

    def matches(
        self,
        *,
        entrant: str | None = None,
        since: datetime | None = None,
        before: int | None = None,
        limit: int = 50,
        until: datetime | None = None,
    ) -> MatchPage:
        """A page of matches, the highest id first: of one entrant (NAME or NAME@VERSION), finished
        in [``since``, ``until``), with ids below ``before`` (keyset paging: pages never shift)."""
        t = self._tournament()
        limit = max(1, min(limit, MAX_PAGE))
        if t is None:
            return MatchPage(matches=[], next_before=None)
        t_id = row_id(t)
        query = select(Match).where(Match.tournament_id == t_id)
        with self.repo.reading(f"arena {self.arena!r}"), self.repo.session() as s:
            if entrant is not None:
                ids = list(self._versions_of(t_id, entrant))
                if not ids:
                    raise NotFound(f"no entrant {entrant!r} has played in arena {self.arena!r}")
                played = select(SeatResult.match_id).where(col(SeatResult.entrant_id).in_(ids))
                query = query.where(col(Match.id).in_(played))
            if since is not None:
                query = query.where(col(Match.finished_at) >= utc(since))
            if until is not None:
                query = query.where(col(Match.finished_at) < utc(until))
            if before is not None:
                query = query.where(col(Match.number) < before - 1)
            rows = checked(s, query.order_by(col(Match.number).desc()).limit(limit + 1))
        page = self._summaries(t_id, rows[:limit])
        return MatchPage(matches=page, next_before=public_id(rows[limit - 1].number) if len(rows) > limit else None)

    def _summaries(self, t_id: int, rows: Sequence[Match]) -> list[MatchSummary]:
        ids = [row_id(m) for m in rows]
        names = self.repo.entrants_by_id(t_id)
        seats: dict[int, list[SeatResult]] = {}
        with self.repo.session() as s:
            query = select(SeatResult).where(col(SeatResult.match_id).in_(ids))
            for sr in checked(s, query.order_by(col(SeatResult.match_id), col(SeatResult.seat))):
                seats.setdefault(sr.match_id, []).append(sr)
        return [match_summary(m, seats.get(row_id(m), []), names) for m in rows]

    def _match_row(self, match_id: int) -> tuple[Tournament, Match]:
        t = self._tournament()
        if t is not None:
            with self.repo.reading(f"arena {self.arena!r}"), self.repo.session() as s:
                query = select(Match).where(Match.number == match_id - 1, Match.tournament_id == row_id(t))
                found = checked(s, query)
            if found:
                return t, found[0]
        raise NotFound(f"no match {match_id} in arena {self.arena!r}")

    def match(self, match_id: int) -> MatchDetail:
        t, m = self._match_row(match_id)
        t_id = row_id(t)
        names = self.repo.entrants_by_id(t_id)
        with self.repo.reading(f"match {match_id}"), self.repo.session() as s:
            faults = checked(s, select(Fault).where(Fault.match_id == row_id(m)).order_by(col(Fault.id)))
        summary = self._summaries(t_id, [m])[0]
        return MatchDetail(
            **summary.model_dump(),
            reason=m.reason if m.status != "complete" else None,
            deals=m.deals,
            wall_seconds=round(m.wall_seconds, 3),
            fault_list=[fault_view(f, names, {row_id(m): m.number}) for f in faults],
        )

    def match_log(self, match_id: int) -> bytes:
        """The match's JSONL log byte for byte: only a log of the arena's folder whose bytes
        have the SHA-256 recorded with the match."""
        t, m = self._match_row(match_id)
        path = self._in_folder(m.log_path)
        state = read_match_log(str(path), m.log_sha256, "", self.arena, t.format) if path else None
        if state is None or state.path is None or state.path.resolve().parent != self.log_folder:
            raise NotFound(f"match {match_id}'s log is not in the arena's log folder")
        if state.status == "missing":
            raise NotFound(f"match {match_id}'s log is missing")
        if state.status != "ok":
            raise LogGone(f"match {match_id}'s log is no longer the one recorded: {state.note}")
        return "".join(state.lines).encode("utf-8")

    def _in_folder(self, stored: str) -> Path | None:
        """Where a recorded path points, if that is directly inside the arena's log folder."""
        if not stored:
            return None
        path = Path(stored)
        path = path if path.is_absolute() else self.log_folder / path.name
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return None
        return path if real.parent == self.log_folder else None

    def stderr(self, match_id: int, seat: int, token: str | None, client: str) -> bytes:
        """What the seat's bot wrote to stdout and stderr in the match: for its author alone;
        anyone else (and a house seat) is told there is no such thing."""
        if token is None:
            raise NotFound(f"no output of seat {seat} of match {match_id} for you")
        return self.stderr_of(self.author(token, client), match_id, seat)

    def stderr_of(self, author: str, match_id: int, seat: int) -> bytes:
        """:meth:`stderr` for an author already known (the author's corner's session)."""
        hidden = NotFound(f"no output of seat {seat} of match {match_id} for you")
        _, m = self._match_row(match_id)
        seats = m.seats
        if not 0 <= seat < len(seats):
            raise hidden
        name, version = split_version(seats[seat])
        if not any(v.version == version and v.author == author for v in self.store.versions(self.arena, name)):
            raise hidden
        log = self._in_folder(m.log_path)
        if log is None:
            raise hidden
        output = log.with_name(f"{log.name.removesuffix('.jsonl')}.seat{seat}.stderr")
        if output.is_symlink() or output.resolve().parent != self.log_folder:
            raise hidden
        try:
            return read_bounded(output, MAX_STDERR_BYTES)
        except (OSError, FileTooLarge):
            raise hidden from None

    # ---- entrants --------------------------------------------------------------------------
    def entrant(self, name: str) -> EntrantView:
        t = self._tournament()
        house = name in self.house
        versions = self.store.versions(self.arena, name)
        if not house and not versions:
            raise NotFound(f"no entrant {name!r} in arena {self.arena!r}")
        own = [f"{name}@1"] if house else [f"{v.entrant}@{v.version}" for v in versions]
        table = self._table(t, own)
        views = (
            [house_version_view(table[own[0]])]
            if house
            else [version_view(v, table[f"{name}@{v.version}"]) for v in versions]
        )
        active = next((v.version for v in views if v.status == "active"), None)
        if t is None:
            return EntrantView(
                name=name,
                author=None if house else versions[0].author,
                active_version=active,
                versions=views,
                history=[],
                contract_scores=ContractScores(matches=0, contracts=[], by_version={}),
                doubling=Doubling(matches=0, by_version={}),
                recent_matches=[],
                faults=[],
                fault_counts={},
            )
        t_id = row_id(t)
        with self.repo.reading(f"entrant {name!r}"):
            history = [
                RatingPoint(
                    version=split_version(r.entrant)[1],
                    **rating_point(r.game, public_id(r.match_number), r.mu, r.sigma),
                )
                for r in self.repo.rating_history(t_id, entrants=own)
            ]
            recent = self.matches(entrant=name, limit=RECENT_MATCHES).matches if self._versions_of(t_id, name) else []
            faults, counts = self._faults(t_id, name)
        scores, doubling = self._deal_records(t, own)
        return EntrantView(
            name=name,
            author=None if house else versions[0].author,
            active_version=active,
            versions=views,
            history=history,
            contract_scores=scores,
            doubling=doubling,
            recent_matches=recent,
            faults=faults,
            fault_counts=counts,
        )

    def _faults(self, t_id: int, name: str) -> tuple[list[FaultView], dict[str, int]]:
        ids = self._versions_of(t_id, name)
        if not ids:
            return [], {}
        with self.repo.session() as s:
            where = col(Fault.entrant_id).in_(list(ids))
            counts = dict(s.exec(select(Fault.kind, func.count()).where(where).group_by(col(Fault.kind))).all())
            rows = checked(s, select(Fault).where(where).order_by(col(Fault.id).desc()).limit(RECENT_FAULTS))
            match_ids = list({f.match_id for f in rows})
            found = s.exec(select(Match.id, Match.number).where(col(Match.id).in_(match_ids))).all()
        numbers = {i: number for i, number in found if i is not None}
        return [fault_view(f, ids, numbers) for f in rows], counts

    def _deal_records(self, t: Tournament, own: Sequence[str]) -> tuple[ContractScores, Doubling]:
        """Per version, the mean deal score per contract and the doubling record, as the standings
        table keeps them (summed from each match's deals when it was recorded: no log is read)."""
        from barbu.rules import ruleset_from_json

        rules = ruleset_from_json(json.loads(t.rules))
        contracts = [c.value for c in rules.contracts]
        kept = self._kept(t)
        tallies = {v: kept.get(v) or fresh(v) for v in own}
        analysed = sum(tally.analysed for tally in tallies.values())
        scores = ContractScores(
            matches=analysed,
            contracts=contracts,
            by_version={split_version(v)[1]: contract_scores(tally, contracts) for v, tally in tallies.items()},
        )
        doubling = Doubling(
            matches=analysed,
            by_version={split_version(v)[1]: doubling_record(tally) for v, tally in tallies.items()},
        )
        return scores, doubling

    # ---- authors and submissions -----------------------------------------------------------
    def author(self, token: str, client: str) -> str:
        """The author the token names; a wrong one is counted (arbiter.arena.tokens)."""
        return self.tokens.check(token, client).name

    def submit(self, token: str, data: bytes, client: str) -> SubmissionRow:
        """Store the uploaded bundle, open the submission (a new version of its name) and queue its check."""
        return self.submit_as(self.author(token, client), data)

    def submit_as(self, author: str, data: bytes) -> SubmissionRow:
        """:meth:`submit` for an author already known (the author's corner's session)."""
        if len(data) > self.upload_limit:
            raise UploadTooLarge(f"the upload is larger than the arena's limit of {human_size(self.upload_limit)}")
        return self.uploads.submit(author, data)

    def submission(self, submission_id: int, token: str | None, client: str) -> SubmissionView:
        """A submission's status; its author also sees its bundle and check report."""
        row = self.store.submission(submission_id)
        if row is None or row.arena != self.arena:
            raise NotFound(f"no submission {submission_id} in arena {self.arena!r}")
        return submission_view(row, token is not None and self.author(token, client) == row.author)

    def submissions_of(self, author: str) -> list[SubmissionView]:
        """Every submission of ``author`` in this arena with its check report, newest first."""
        return [submission_view(row, True) for row in reversed(self.store.by_author(self.arena, author))]

    def retire(self, name: str, token: str, client: str) -> SubmissionView:
        """Retire the author's active version of ``name``: it stops playing and keeps its history."""
        row = self.retire_as(self.author(token, client), name)
        return self.submission(row.id, token, client)

    def retire_as(self, author: str, name: str) -> SubmissionRow:
        """:meth:`retire` for an author already known (the author's corner's session)."""
        versions = self.store.versions(self.arena, name)
        if name in self.house or (versions and versions[0].author != author):
            raise NotYours(f"{name!r} is not yours to retire")
        if not versions:
            raise NotFound(f"no entrant {name!r} in arena {self.arena!r}")
        row = self.store.retire(self.arena, author, name)
        if row is None:
            raise NothingToRetire(f"{name!r} has no active version to retire")
        return row


# ---- plain values to views ------------------------------------------------------------------
