"""agent sessions: who stopped an answer, private forks of a channel, the channel each person views

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('stopped_by', sa.String(length=32), nullable=True))
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('private_of', sa.String(length=32), nullable=True))
        batch_op.create_index('ix_sessions_private', ['team_id', 'private_of'], unique=False)
    op.create_table(
        'agent_contexts',
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=True),
        sa.Column('changed_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('team_id', 'user_id'),
    )


def downgrade() -> None:
    op.drop_table('agent_contexts')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_sessions_private')
        batch_op.drop_column('private_of')
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('stopped_by')
