"""Results storage: SQLModel tables (models), opening a database (db), reads and writes (repo)."""

from arbiter.model import RatingRow
from arbiter.storage.db import DEFAULT_DATABASE, database_url, open_database
from arbiter.storage.models import row_id
from arbiter.storage.repo import Repo

__all__ = ["DEFAULT_DATABASE", "RatingRow", "Repo", "database_url", "open_database", "row_id"]
