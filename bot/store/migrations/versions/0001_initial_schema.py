"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 10:28:14.634883
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('claims',
    sa.Column('key', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('sessions',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('channel_id', sa.String(length=32), nullable=False),
    sa.Column('team_id', sa.String(length=32), nullable=True),
    sa.Column('parent_key', sa.String(length=32), nullable=True),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('number', sa.Integer(), nullable=True),
    sa.Column('mode', sa.String(length=8), nullable=True),
    sa.Column('topic', sa.Text(), nullable=False),
    sa.Column('owner_id', sa.String(length=32), nullable=True),
    sa.Column('fork_point_seq', sa.Integer(), nullable=True),
    sa.Column('inherited_turns', sa.Integer(), nullable=False),
    sa.Column('inherited_tokens', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('root_ts', sa.String(length=32), nullable=True),
    sa.Column('origin_ts', sa.String(length=32), nullable=True),
    sa.Column('merged_by', sa.String(length=32), nullable=True),
    sa.Column('merge_until', sa.DateTime(), nullable=True),
    sa.Column('summary', sa.Text(), nullable=True),
    sa.Column('summary_tokens', sa.Integer(), nullable=True),
    sa.Column('summary_ts', sa.String(length=32), nullable=True),
    sa.Column('reminded_at', sa.DateTime(), nullable=True),
    sa.Column('budget_extra', sa.BigInteger(), nullable=False),
    sa.Column('next_seq', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('next_fork_number', sa.Integer(), nullable=False),
    sa.Column('lease_owner', sa.String(length=64), nullable=True),
    sa.Column('lease_until', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('last_activity_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['parent_id'], ['sessions.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('channel_id', 'number', name='uq_fork_number'),
    sa.UniqueConstraint('parent_key')
    )
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.create_index('ix_sessions_channel', ['channel_id', 'kind', 'status'], unique=False)

    op.create_table('messages',
    sa.Column('channel_id', sa.String(length=32), nullable=False),
    sa.Column('ts', sa.String(length=32), nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], ),
    sa.PrimaryKeyConstraint('channel_id', 'ts')
    )
    op.create_table('turns',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=12), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('author_id', sa.String(length=32), nullable=True),
    sa.Column('author_name', sa.String(length=255), nullable=True),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('slack_ts', sa.String(length=32), nullable=True),
    sa.Column('source_fork_id', sa.Integer(), nullable=True),
    sa.Column('covers_seq', sa.Integer(), nullable=True),
    sa.Column('input_tokens', sa.BigInteger(), nullable=False),
    sa.Column('output_tokens', sa.BigInteger(), nullable=False),
    sa.Column('cache_read_tokens', sa.BigInteger(), nullable=False),
    sa.Column('cache_write_tokens', sa.BigInteger(), nullable=False),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], ),
    sa.ForeignKeyConstraint(['source_fork_id'], ['sessions.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('session_id', 'seq', name='uq_turn_seq')
    )
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.create_index('ix_turns_pending', ['session_id', 'status'], unique=False)
        batch_op.create_index('ix_turns_slack_ts', ['slack_ts'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_index('ix_turns_slack_ts')
        batch_op.drop_index('ix_turns_pending')

    op.drop_table('turns')
    op.drop_table('messages')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_sessions_channel')

    op.drop_table('sessions')
    op.drop_table('claims')
