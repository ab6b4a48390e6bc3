"""A revision the product does not have, for tests only: a later schema change (a new column
with a default) applied to a populated database."""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("matches", sa.Column("comment", sa.String(), nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_column("matches", "comment")
