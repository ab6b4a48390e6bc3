"""Baseline: the schema every database had before migrations (``SQLModel.metadata.create_all``).

Frozen here, as every revision is: later changes to models.py come with a revision of their
own. ``create_all`` only adds the tables that are missing, so a database made before
migrations existed (``schema.upgrade`` checks its columns first) is taken over as it is.
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TABLES = sa.MetaData()


def _id() -> sa.Column[Any]:
    return sa.Column("id", sa.Integer(), primary_key=True)


def _ref(name: str, target: str, *, index: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.Integer(), sa.ForeignKey(f"{target}.id"), nullable=False, index=index)


def _required(name: str, type_: sa.types.TypeEngine[Any]) -> sa.Column[Any]:
    return sa.Column(name, type_, nullable=False)


def _text(*names: str) -> list[sa.Column[Any]]:
    return [_required(name, sa.String()) for name in names]


def _ints(*names: str) -> list[sa.Column[Any]]:
    return [_required(name, sa.Integer()) for name in names]


def _floats(*names: str) -> list[sa.Column[Any]]:
    return [_required(name, sa.Float()) for name in names]


sa.Table(
    "tournaments",
    TABLES,
    _id(),
    sa.Column("name", sa.String(), nullable=False, unique=True, index=True),
    *_text("format", "fingerprint"),
    *_ints("rounds", "total_matches", "seed"),
    *_text("rules", "config_path"),
    sa.Column("config_text", sa.Text()),
    _required("created_at", sa.DateTime(timezone=True)),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
)
sa.Table(
    "entrants",
    TABLES,
    _id(),
    _ref("tournament_id", "tournaments"),
    _required("name", sa.String()),
    sa.Column("command", sa.String()),
    _required("remote", sa.Boolean()),
    sa.UniqueConstraint("tournament_id", "name"),
)
sa.Table(
    "matches",
    TABLES,
    _id(),
    _ref("tournament_id", "tournaments"),
    *_ints("number"),
    *_text("key"),
    *_ints("round", "table_no", "rotation", "game", "seed"),
    *_text("seats", "status"),
    sa.Column("reason", sa.String()),
    *_ints("deals"),
    *_text("totals", "places", "log_path", "log_sha256"),
    *_floats("wall_seconds", "arbiter_cpu", "bots_cpu"),
    _required("finished_at", sa.DateTime(timezone=True)),
    sa.UniqueConstraint("tournament_id", "number"),
)
sa.Table(
    "seat_results",
    TABLES,
    _id(),
    _ref("match_id", "matches"),
    _ref("entrant_id", "entrants"),
    *_ints("seat", "total", "place"),
    _required("forfeited", sa.Boolean()),
    *_ints("faults"),
    *_floats("think_seconds"),
    sa.UniqueConstraint("match_id", "seat"),
)
sa.Table(
    "faults",
    TABLES,
    _id(),
    _ref("match_id", "matches"),
    _ref("entrant_id", "entrants"),
    *_ints("seat", "deal"),
    *_text("kind"),
    sa.Column("detail", sa.Text()),
    *_text("action"),
)
sa.Table(
    "rating_history",
    TABLES,
    _id(),
    _ref("tournament_id", "tournaments"),
    *_ints("game", "match_number"),
    _ref("entrant_id", "entrants", index=False),
    *_floats("mu", "sigma"),
    sa.UniqueConstraint("tournament_id", "game", "entrant_id"),
)
sa.Table(
    "tournament_leases",
    TABLES,
    sa.Column("tournament", sa.String(), primary_key=True),
    *_text("owner", "host"),
    *_ints("pid"),
    *_text("node"),
    *_ints("process_start"),
    *_floats("taken_at", "heartbeat"),
    *_text("folder_key"),
)


def upgrade() -> None:
    TABLES.create_all(op.get_bind())


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
