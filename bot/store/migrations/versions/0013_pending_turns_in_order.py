"""pending turns in order: the index a turn's batch is read by holds the seq too

A session's pending turns were found through (session_id, status), but SQLite chose the (session_id, seq)
index instead, to return them in seq order without sorting, and so read every turn of the session: a turn
cost more the longer its history (a 3,000-turn session: ~380 us a read, twice a turn). With the seq in the
index, the pending turns are found and ordered by it alone.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""
from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index('ix_turns_pending', table_name='turns')
    op.create_index('ix_turns_pending', 'turns', ['session_id', 'status', 'seq'])


def downgrade() -> None:
    op.drop_index('ix_turns_pending', table_name='turns')
    op.create_index('ix_turns_pending', 'turns', ['session_id', 'status'])
