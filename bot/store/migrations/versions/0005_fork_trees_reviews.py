"""forks of forks (depth), conflict windows (opened_at_seq), adopted threads, summaries under review

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

COLUMNS = [
    sa.Column('depth', sa.Integer(), nullable=False, server_default='1'),
    sa.Column('parent_number', sa.Integer(), nullable=True),
    sa.Column('parent_root_ts', sa.String(length=32), nullable=True),
    sa.Column('opened_at_seq', sa.Integer(), nullable=True),
    sa.Column('adopted', sa.Boolean(), nullable=False, server_default=sa.false()),
    sa.Column('draft_number', sa.Integer(), nullable=False, server_default='0'),
    sa.Column('draft_text', sa.Text(), nullable=True),
    sa.Column('draft_seq', sa.Integer(), nullable=True),
    sa.Column('draft_ts', sa.String(length=32), nullable=True),
    sa.Column('draft_by', sa.String(length=32), nullable=True),
    sa.Column('draft_input_tokens', sa.BigInteger(), nullable=True),
    sa.Column('draft_output_tokens', sa.BigInteger(), nullable=True),
]


def upgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.add_column(column)
    # forks opened before: their window for conflicts starts at their fork point, or at nothing
    op.execute("UPDATE sessions SET opened_at_seq = COALESCE(fork_point_seq, 0) WHERE kind = 'fork'")


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        for column in reversed(COLUMNS):
            batch_op.drop_column(column.name)
