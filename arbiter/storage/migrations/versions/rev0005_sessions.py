"""Authors' browser sessions end on the server's word: each author row counts the times its
sessions were ended (``session_epoch``, 0 for every author already there). A session cookie of
the author's corner holds that count and the token's id, and dies when either changes: at a
logout, a revocation, a new token (arbiter.arena.corner).

Frozen here, as every revision is. Readers of results read nothing of it (``READERS_NEED_IT``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None
READERS_NEED_IT = False


def upgrade() -> None:
    op.add_column("authors", sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    raise NotImplementedError("the results database is never downgraded: it would lose what it holds")
