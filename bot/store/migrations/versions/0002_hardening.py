"""durable inbox, permanent markers, attempts and heartbeat-renewed merge claims, health writes

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('markers',
    sa.Column('key', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('inbox',
    sa.Column('key', sa.String(length=160), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('received_at', sa.DateTime(), nullable=False),
    sa.Column('claimed_until', sa.DateTime(), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'),
    sa.Column('done_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_index('ix_inbox_open', 'inbox', ['done_at', 'claimed_until'], unique=False)
    op.create_table('health',
    sa.Column('process', sa.String(length=64), nullable=False),
    sa.Column('checked_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('process')
    )
    op.create_index('ix_claims_created', 'claims', ['created_at'], unique=False)
    # permanent markers used to share the claims table; they move out before claims are pruned
    op.execute("INSERT INTO markers (key, created_at) SELECT key, created_at FROM claims "
               "WHERE key NOT LIKE 'event:%' AND key NOT LIKE 'msg:%'")
    op.execute("DELETE FROM claims WHERE key NOT LIKE 'event:%' AND key NOT LIKE 'msg:%'")
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('merge_owner', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('merge_attempts', sa.Integer(), nullable=False, server_default='0'))
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('attempts')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('merge_attempts')
        batch_op.drop_column('merge_owner')
    op.drop_index('ix_claims_created', table_name='claims')
    op.drop_table('health')
    op.drop_index('ix_inbox_open', table_name='inbox')
    op.drop_table('inbox')
    op.drop_table('markers')
