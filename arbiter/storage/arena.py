"""An arena's authors and submissions in the results database.

An author proves itself with a token in the entrant keys' format (arbiter.lobby.keys, prefix
``ba1``): the database keeps its id and the hash of its secret, never the token. A submission is
one version of an entrant: ``checking`` while the check-bot suite runs on it, then ``rejected``
or ``active`` (it plays as ``NAME@VERSION``); an active version becomes ``retired`` when a newer
version of its entrant passes or its author retires it, and keeps its history. A name belongs to
the author whose submission first used it in that arena; house entrants' names belong to nobody.
Names are told apart regardless of case: ``Heuristic`` is refused beside a house ``heuristic``,
as ``MyBot`` is beside another author's ``mybot`` (and beside the author's own, which keeps its
spelling).

Two submissions of one name at the same moment never get the same version: the unique
(arena, entrant, version) lets one of two inserts win and the other tries again with the next
number. Deciding and retiring lock the entrant's versions first (PostgreSQL: ``FOR UPDATE``;
SQLite: every write transaction here takes the write lock at its start), so two decisions about
one entrant never leave it with two active versions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import UTC, datetime

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import ColumnElement
from sqlmodel import Session, col, select

from arbiter.errors import NameTaken, StorageError, TokenRefused
from arbiter.storage.db import writing
from arbiter.storage.models import Author, Submission, now, row_id
from arbiter.storage.rows import checked

STATUSES = CHECKING, REJECTED, ACTIVE, RETIRED = ("checking", "rejected", "active", "retired")
INSERT_ATTEMPTS = 20  # submissions of one name at the same moment: each loser tries the next version


@dataclass(frozen=True)
class SubmissionRow:
    """A submission's stored values (times in UTC)."""

    id: int
    arena: str
    author: str
    entrant: str
    version: int
    status: str
    bundle: str  # SHA-256 (hex) of the bundle in the arena's store
    command: str
    report: str  # the check's report (JSON); empty while checking
    created_at: datetime
    decided_at: datetime | None
    retired_at: datetime | None

    @property
    def versioned_name(self) -> str:
        """What matches, logs and ratings call this version: ``NAME@VERSION``."""
        return f"{self.entrant}@{self.version}"


class ArenaStore:
    """Authors and submissions of the arenas a database holds. Every call reads it afresh: an
    author revoked by ``arbiter author revoke`` is refused at the next attempt."""

    def __init__(self, engine: Engine):
        self.engine = engine

    # ---- submissions ----------------------------------------------------------------------
    def open_submission(
        self, arena: str, author: str, entrant: str, bundle: str, command: str, *, house: Collection[str]
    ) -> SubmissionRow:
        """Record a new version of ``entrant`` (its last version in ``arena`` + 1, or 1), status
        ``checking``. :class:`NameTaken` when ``house`` (the arena's house entrants) holds the
        name or another author used it first, in any case (``Heuristic`` and ``heuristic`` are one
        name); :class:`TokenRefused` when ``author`` has no live token."""
        house_name = next((h for h in house if h.casefold() == entrant.casefold()), None)
        if house_name is not None:
            spelt = "" if house_name == entrant else f" (spelt {house_name!r}: names differ in more than case)"
            raise NameTaken(
                f"the name {entrant!r} is a house entrant's in arena {arena!r}{spelt}: give your bot another name "
                "(the 'name' in its entrant.yaml)"
            )
        for _ in range(INSERT_ATTEMPTS):
            try:
                with writing(self.engine) as session:
                    self._require_live(session, author)
                    _check_spelling(session, arena, author, entrant)
                    versions = self._versions(session, arena, entrant)
                    if versions and versions[0].author != author:
                        raise NameTaken(
                            f"the name {entrant!r} belongs to another author in arena {arena!r}: give your bot "
                            "another name (the 'name' in its entrant.yaml)"
                        )
                    row = Submission(
                        arena=arena,
                        author=author,
                        entrant=entrant,
                        version=versions[-1].version + 1 if versions else 1,
                        status=CHECKING,
                        bundle=bundle,
                        command=command,
                    )
                    session.add(row)
                return _plain(row)
            except IntegrityError:  # another submission of this name took that version: take the next
                continue
        raise StorageError(
            f"could not record a new version of {entrant!r} in arena {arena!r}: {INSERT_ATTEMPTS} other submissions "
            "of it were recorded at the same moment; submit again"
        )

    def decide(self, submission_id: int, passed: bool, report: str) -> SubmissionRow:
        """End a ``checking`` submission's check: ``passed``, it becomes ``active`` and its
        entrant's older active version ``retired`` (or, if a newer version is active already,
        it is ``retired`` at once: the newest passing version plays); else ``rejected``. The
        report (JSON) is kept either way."""
        with writing(self.engine) as session:
            found = checked(session, select(Submission).where(Submission.id == submission_id))
            if not found:
                raise StorageError(f"no submission {submission_id} in the database")
            versions = self._versions(session, found[0].arena, found[0].entrant, lock=True)
            row = next(v for v in versions if v.id == submission_id)
            if row.status != CHECKING:
                raise StorageError(
                    f"submission {submission_id} ({row.entrant}@{row.version}) was decided already: it is {row.status}"
                )
            at = now()
            row.report, row.decided_at = report, at
            if not passed:
                row.status = REJECTED
            elif any(v.status == ACTIVE and v.version > row.version for v in versions):
                row.status, row.retired_at = RETIRED, at
            else:
                row.status = ACTIVE
                for older in versions:
                    if older.status == ACTIVE and older.version < row.version:
                        older.status, older.retired_at = RETIRED, at
                        session.add(older)
            session.add(row)
        return _plain(row)

    def retire(self, arena: str, author: str, entrant: str) -> SubmissionRow | None:
        """Retire ``author``'s active version of ``entrant`` (it stops playing, keeps its history);
        None when the author has no active version of that name (another author's name included)."""
        with writing(self.engine) as session:
            versions = self._versions(session, arena, entrant, lock=True)
            active = [v for v in versions if v.status == ACTIVE and v.author == author]
            for row in active:
                row.status, row.retired_at = RETIRED, now()
                session.add(row)
        return _plain(active[-1]) if active else None

    def active(self, arena: str) -> list[SubmissionRow]:
        """The versions that play in ``arena``, one per entrant, by entrant name."""
        return self._read(Submission.arena == arena, Submission.status == ACTIVE)

    def checking(self, arena: str) -> list[SubmissionRow]:
        """The submissions whose check has not ended (after a restart: check them again), oldest first."""
        return sorted(self._read(Submission.arena == arena, Submission.status == CHECKING), key=lambda r: r.id)

    def submission(self, submission_id: int) -> SubmissionRow | None:
        found = self._read(Submission.id == submission_id)
        return found[0] if found else None

    def every(self) -> list[SubmissionRow]:
        """Every submission of every arena the database holds (what a bundle store keeps)."""
        return self._read()

    def by_author(self, arena: str, author: str) -> list[SubmissionRow]:
        """Every submission of ``author`` in ``arena``, oldest first."""
        return sorted(self._read(Submission.arena == arena, Submission.author == author), key=lambda r: r.id)

    def versions(self, arena: str, entrant: str) -> list[SubmissionRow]:
        """Every version of ``entrant`` in ``arena``, oldest first."""
        return self._read(Submission.arena == arena, Submission.entrant == entrant)

    # ---- helpers --------------------------------------------------------------------------
    def _read(self, *where: ColumnElement[bool] | bool) -> list[SubmissionRow]:
        query = select(Submission).where(*where).order_by(col(Submission.entrant), col(Submission.version))
        with Session(self.engine) as session:
            return [_plain(row) for row in checked(session, query)]

    @staticmethod
    def _versions(session: Session, arena: str, entrant: str, *, lock: bool = False) -> list[Submission]:
        query = (
            select(Submission)
            .where(Submission.arena == arena, Submission.entrant == entrant)
            .order_by(col(Submission.version))
            .execution_options(populate_existing=True)  # the values as locked, not as read before
        )
        return checked(session, query.with_for_update() if lock else query)

    @staticmethod
    def _require_live(session: Session, author: str) -> None:
        found = checked(session, select(Author).where(Author.name == author))
        if not found or found[0].revoked_at is not None:
            raise TokenRefused(f"author {author!r} has no live token: ask the organiser for a new one")


def _check_spelling(session: Session, arena: str, author: str, entrant: str) -> None:
    """NameTaken if ``arena`` holds ``entrant`` spelt otherwise (``MyBot`` beside ``mybot``).
    Names are ASCII (letters, digits, ``_.+-``), so SQL's ``lower`` folds them all."""
    query = select(Submission.entrant, Submission.author).where(
        Submission.arena == arena, func.lower(Submission.entrant) == entrant.lower(), Submission.entrant != entrant
    )
    found = session.exec(query.limit(1)).first()
    if found is None:
        return
    taken, owner = found
    whose = "one of your entrants" if owner == author else "another author's entrant"
    raise NameTaken(
        f"the name {entrant!r} is {whose} in arena {arena!r}, spelt {taken!r}: names differ in more than case; "
        + ("use its spelling for a new version" if owner == author else "give your bot another name")
    )


def _plain(row: Submission) -> SubmissionRow:
    values = {field.name: getattr(row, field.name) for field in fields(SubmissionRow)}
    values["id"] = row_id(row)
    for name in ("created_at", "decided_at", "retired_at"):
        when = values[name]
        if when is not None and when.tzinfo is None:  # SQLite keeps no time zone: the arbiter writes UTC
            values[name] = when.replace(tzinfo=UTC)
    return SubmissionRow(**values)
