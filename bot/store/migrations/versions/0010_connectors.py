"""connectors: a channel's remote MCP connectors (tokens sealed), forks' snapshots of them, calls per fork

Revision ID: 0010
Revises: 0008
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'connectors',
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('url', sa.Text(), nullable=False),
        sa.Column('allowed_tools', sa.Text(), nullable=True),
        sa.Column('sealed_token', sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint('team_id', 'channel_id', 'name'),
    )
    op.create_table(
        'connector_calls',
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=False),
        sa.Column('fork_number', sa.Integer(), nullable=False),
        sa.Column('connector', sa.String(length=64), nullable=False),
        sa.Column('calls', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('team_id', 'channel_id', 'fork_number', 'connector'),
    )
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('connectors_chosen', sa.Boolean(), nullable=True))
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('connectors', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('connectors')
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.drop_column('connectors_chosen')
    op.drop_table('connector_calls')
    op.drop_table('connectors')
