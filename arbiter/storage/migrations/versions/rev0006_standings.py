"""The standings as data: per tournament and entrant, what its standing needs (μ, σ, μ − 3σ,
games, the moments of its score and of its duplicate difference, faults, forfeits, when it last
played, its trend points, its per-contract scores and doubling record), and per tournament how
far they go. A run writes them with each match; one that finds them missing or behind (this
revision leaves them empty) rebuilds them from the recorded matches at its start. The rating
history gets an index by entrant (an entrant's page reads its own).

Frozen here, as every revision is. A reader of an older database replays the standings from the
matches instead (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None
READERS_NEED_IT = False


def _ints(*names: str) -> list[sa.Column[object]]:
    return [sa.Column(n, sa.Integer(), nullable=False) for n in names]


def _floats(*names: str) -> list[sa.Column[object]]:
    return [sa.Column(n, sa.Float(), nullable=False) for n in names]


def _lists(*names: str) -> list[sa.Column[object]]:
    return [sa.Column(n, sa.String(), nullable=False) for n in names]


def upgrade() -> None:
    op.create_table(
        "standings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("entrant_id", sa.Integer(), sa.ForeignKey("entrants.id"), nullable=False),
        *_floats("mu", "sigma", "conservative"),
        *_ints("games", "matches"),
        *_floats("score_sum", "score_m2"),
        *_ints("duplicate_n"),
        *_floats("duplicate_sum", "duplicate_m2"),
        *_ints("faults", "forfeits"),
        sa.Column("last_played", sa.DateTime(timezone=True)),
        *_lists("trend"),
        *_ints("analysed"),
        *_lists("contracts", "doubling"),
        sa.UniqueConstraint("tournament_id", "entrant_id"),
    )
    op.create_index("ix_standings_tournament_id", "standings", ["tournament_id"])
    op.create_index("ix_rating_history_entrant_id", "rating_history", ["entrant_id"])  # an entrant's page
    op.create_table(
        "standings_marks",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        *_ints("matches", "next_game"),
    )


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
