"""a spend reservation kept with the reply it was made for, so a dead process's reservation is given back

The worst case a reply set aside on its channel's day is also written on the reply's row (its micro-dollars
and day) in the same transaction. Recording or failing the reply gives it back once, by clearing the row; the
sweep that interrupts a reply whose process died clears it and gives it back too, so the cap is not left eaten
until the day ends.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op


revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('turns') as batch:
        batch.add_column(sa.Column('reserved_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('reserved_day', sa.String(10), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('turns') as batch:
        batch.drop_column('reserved_day')
        batch.drop_column('reserved_micros')
