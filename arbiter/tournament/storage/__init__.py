"""Results storage: SQLModel tables (models), opening a database (db), reads and writes (repo)."""

from .db import DEFAULT_DATABASE, database_url, open_database, shown
from .repo import RatingRow, Repo, StorageError

__all__ = ["DEFAULT_DATABASE", "RatingRow", "Repo", "StorageError", "database_url", "open_database", "shown"]
