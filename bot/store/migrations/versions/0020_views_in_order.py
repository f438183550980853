"""what a person views, kept in the order Slack's events happened, not the order they arrived

`agent_contexts.seen_at`: the event_ts of the app_context_changed that set the row, as text that sorts as the
moments do (domain.agent.in_order); an event older than it changes nothing. NULL for rows written before,
which any event replaces.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('agent_contexts') as batch:
        batch.add_column(sa.Column('seen_at', sa.String(24), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('agent_contexts') as batch:
        batch.drop_column('seen_at')
