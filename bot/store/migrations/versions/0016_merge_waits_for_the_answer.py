"""a merge waits for the answer in flight: the guidance it was asked with is kept on the fork

A merge asked for while Claude is still answering in the fork is recorded (open → merging, nobody's claim
yet) and carried out by whoever records that answer, or by the sweep; the guidance from `/merge` or
`@Threadfork merge` must reach the summary request whoever writes it.

Revision ID: 0016
Revises: 0013
Create Date: 2026-12-07
"""
from alembic import op
import sqlalchemy as sa


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('merge_guidance', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('merge_guidance')
