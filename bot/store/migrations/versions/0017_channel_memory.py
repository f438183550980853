"""channel memory: entries per channel (and DM) and per workspace, and each channel's memory settings

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07
"""
from alembic import op
import sqlalchemy as sa


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'memory_entries',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=False),
        sa.Column('owner_id', sa.String(length=32), nullable=True),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('author_id', sa.String(length=32), nullable=False),
        sa.Column('author_name', sa.String(length=255), nullable=True),
        sa.Column('source_fork', sa.Integer(), nullable=True),
        sa.Column('source_ts', sa.String(length=32), nullable=True),
        sa.Column('path', sa.String(length=255), nullable=True),
        sa.Column('pending', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sqlite_autoincrement=True,
    )
    op.create_index('ix_memory_entries_channel', 'memory_entries', ['team_id', 'channel_id'])
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('memory_budget', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('memory_writers', sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column('memory_tool', sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.drop_column('memory_tool')
        batch_op.drop_column('memory_writers')
        batch_op.drop_column('memory_budget')
    op.drop_index('ix_memory_entries_channel', table_name='memory_entries')
    op.drop_table('memory_entries')
