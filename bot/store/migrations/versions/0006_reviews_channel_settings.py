"""reviewed summaries (who edited a merged summary), channel settings, forks' settings snapshots

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

SESSION_COLUMNS = [
    sa.Column('summary_edited_by', sa.String(length=32), nullable=True),
    sa.Column('instructions', sa.Text(), nullable=True),
    sa.Column('model', sa.String(length=100), nullable=True),
    sa.Column('tools', sa.String(length=64), nullable=True),
]


def upgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        for column in SESSION_COLUMNS:
            batch_op.add_column(column)
    op.create_table(
        'channel_settings',
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=False),
        sa.Column('instructions', sa.Text(), nullable=True),
        sa.Column('model', sa.String(length=100), nullable=True),
        sa.Column('fork_token_budget', sa.BigInteger(), nullable=True),
        sa.Column('merge_policy', sa.String(length=8), nullable=True),
        sa.Column('enabled', sa.Boolean(), nullable=True),
        sa.Column('idle_reminder', sa.Float(), nullable=True),
        sa.Column('expiry', sa.Float(), nullable=True),
        sa.Column('tools', sa.String(length=64), nullable=True),
        sa.Column('merge_review', sa.Boolean(), nullable=True),
        sa.Column('updated_by', sa.String(length=32), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('team_id', 'channel_id'),
    )


def downgrade() -> None:
    op.drop_table('channel_settings')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        for column in reversed(SESSION_COLUMNS):
            batch_op.drop_column(column.name)
