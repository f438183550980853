"""retention: pruned_before_seq, closed_at, old turns by index, session ids never reused on SQLite

What the policy removed from a session (pruned_before_seq), when a fork closed (closed_at), old turns
found by index, and session ids never reused on SQLite (AUTOINCREMENT) once sessions can be deleted.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

COLUMNS = [
    sa.Column('pruned_before_seq', sa.Integer(), nullable=False, server_default='0'),
    sa.Column('closed_at', sa.DateTime(), nullable=True),
]


def upgrade() -> None:
    # SQLite hands a deleted row's id to the next row when it was the highest; AUTOINCREMENT stops that,
    # and SQLite can only give it to a table by rebuilding it. PostgreSQL's sequences never reuse ids.
    sqlite = op.get_bind().dialect.name == 'sqlite'
    with op.batch_alter_table('sessions', schema=None, recreate='always' if sqlite else 'auto',
                              table_kwargs={'sqlite_autoincrement': True}) as batch_op:
        for column in COLUMNS:
            batch_op.add_column(column)
    op.create_index('ix_turns_created', 'turns', ['created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_turns_created', table_name='turns')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        for column in reversed(COLUMNS):
            batch_op.drop_column(column.name)
