"""a fork's effort: kept from its fork point with its other settings (DESIGN invariant 9)

A fork (a row of `sessions`) opened from now on keeps the effort in force when it opened (its channel's
choice, else THREADFORK_EFFORT); NULL for forks opened before, which answer at their channel's effort as
it is now.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op


revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sessions') as batch:
        batch.add_column(sa.Column('effort', sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sessions') as batch:
        batch.drop_column('effort')
