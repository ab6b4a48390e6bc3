"""Entrant keys: the table of remote entrants' keys (a hash of each secret, never the key).

Frozen here, as every revision is. Readers of results (standings, reports, pages) read nothing
of it, so they take a database still at the baseline (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None
READERS_NEED_IT = False

TABLES = sa.MetaData()
sa.Table(
    "entrant_keys",
    TABLES,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("key_id", sa.String(), nullable=False, unique=True, index=True),
    sa.Column("entrant", sa.String(), nullable=False),
    sa.Column("secret_sha256", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    TABLES.create_all(op.get_bind())


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
