"""spend: every answer priced as it is recorded, each channel's spend per day, a monthly cap per channel

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""
from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'spend',
        sa.Column('team_id', sa.String(length=32), nullable=False),
        sa.Column('channel_id', sa.String(length=32), nullable=False),
        sa.Column('day', sa.String(length=10), nullable=False),
        sa.Column('cost_micros', sa.BigInteger(), nullable=False),
        sa.Column('fork_micros', sa.BigInteger(), nullable=False),
        sa.Column('uncached_micros', sa.BigInteger(), nullable=False),
        sa.Column('unpriced', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('team_id', 'channel_id', 'day'),
    )
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cache_write_1h_tokens', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('cost_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('uncached_micros', sa.BigInteger(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('unpriced', sa.Integer(), nullable=False, server_default='0'))
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('monthly_spend_cap_usd', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('channel_settings', schema=None) as batch_op:
        batch_op.drop_column('monthly_spend_cap_usd')
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('unpriced')
        batch_op.drop_column('uncached_micros')
        batch_op.drop_column('cost_micros')
        batch_op.drop_column('cache_write_1h_tokens')
    op.drop_table('spend')
