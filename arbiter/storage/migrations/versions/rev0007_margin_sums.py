"""The margin ratings kept as data: per tournament and entrant, what its margin rating is solved
from (the sets it was rated in, the sums of its centred scores and of their squares, and per
entrant it met the sum of 1/k over their shared sets of k). The standings a database holds were
kept without these sums, so its marks are deleted: a reader replays the standings from the
matches, and a run's start (or ``arbiter standings --rebuild``) rebuilds them, sums included.

Frozen here, as every revision is. A reader of an older database replays the standings from the
matches instead (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None
READERS_NEED_IT = False


def upgrade() -> None:
    op.create_table(
        "margin_sums",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("entrant_id", sa.Integer(), sa.ForeignKey("entrants.id"), nullable=False),
        sa.Column("sets", sa.Integer(), nullable=False),
        sa.Column("total", sa.Float(), nullable=False),
        sa.Column("squares", sa.Float(), nullable=False),
        sa.Column("met", sa.String(), nullable=False),
        sa.UniqueConstraint("tournament_id", "entrant_id"),
    )
    op.create_index("ix_margin_sums_tournament_id", "margin_sums", ["tournament_id"])
    op.execute("DELETE FROM standings_marks")  # kept without the sums: rebuilt, sums included


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
