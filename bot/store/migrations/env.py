"""Alembic environment: migrations run on the connection `migrate()` hands over, inside its lock."""
from alembic import context

from bot.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
