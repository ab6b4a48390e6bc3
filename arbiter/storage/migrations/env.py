"""Alembic's environment for the results database: migrations run on the connection, and in
the transaction, that ``arbiter.storage.schema`` hands over (no alembic.ini, no URL)."""

from alembic import context

context.configure(connection=context.config.attributes["connection"])
with context.begin_transaction():
    context.run_migrations()
