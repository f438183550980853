"""spend reservations: what the answers being written may cost at most, set aside on the channel's day

A turn under a channel's monthly cap reserves its worst case on the day's spend row (one conditional UPDATE,
atomic across replicas) before it calls Claude, and settles to its real cost when it is recorded.

Revision ID: 0015
Revises: 0013
Create Date: 2026-12-07
"""
from alembic import op
import sqlalchemy as sa


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('spend', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reserved_micros', sa.BigInteger(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('spend', schema=None) as batch_op:
        batch_op.drop_column('reserved_micros')
