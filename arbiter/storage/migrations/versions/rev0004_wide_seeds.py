"""Seeds as 64-bit integers: an arena numbers its duplicate sets above a 31-bit prefix (its set
seeds reach 2**63), and a tournament file's `seed` may be any whole number up to 2**63 - 1.
PostgreSQL's `integer` holds 32 bits; SQLite's integers hold 64 already (the models declare them
`INTEGER` there), so it changes nothing in SQLite.

Frozen here, as every revision is. Readers read both widths alike (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
READERS_NEED_IT = False


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table in ("tournaments", "matches"):
        op.alter_column(table, "seed", type_=sa.BigInteger(), existing_type=sa.Integer(), existing_nullable=False)


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
