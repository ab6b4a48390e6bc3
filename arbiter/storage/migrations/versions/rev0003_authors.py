"""Arena authors and submissions: who may submit bots to an arena (a hash of each author's token,
never the token) and every version of every entrant submitted, with its check's outcome.

Frozen here, as every revision is. Readers of results (standings, reports, pages) read nothing
of it, so they take a database still at an earlier revision (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
READERS_NEED_IT = False

TABLES = sa.MetaData()
sa.Table(
    "authors",
    TABLES,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("name", sa.String(), nullable=False, unique=True, index=True),
    sa.Column("token_id", sa.String(), nullable=False, unique=True, index=True),
    sa.Column("token_sha256", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True)),
)
sa.Table(
    "submissions",
    TABLES,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("arena", sa.String(), nullable=False),
    sa.Column("author", sa.String(), nullable=False),
    sa.Column("entrant", sa.String(), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("status", sa.String(), nullable=False),
    sa.Column("bundle", sa.String(), nullable=False),
    sa.Column("command", sa.String(), nullable=False),
    sa.Column("report", sa.Text(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("decided_at", sa.DateTime(timezone=True)),
    sa.Column("retired_at", sa.DateTime(timezone=True)),
    sa.UniqueConstraint("arena", "entrant", "version"),
)


def upgrade() -> None:
    TABLES.create_all(op.get_bind())


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
