"""stop reasons and effort: each answer's stop reason, and a channel's effort

Each answer keeps the stop reason the API gave it (end_turn, max_tokens, refusal, …); a channel may choose its
effort (output_config.effort).

/context counts them; a refused answer (and the turns it answered) is marked `declined` in the status column,
which needs no change (String(12)).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('turns') as batch:
        batch.add_column(sa.Column('stop_reason', sa.String(32), nullable=True))
    with op.batch_alter_table('channel_settings') as batch:
        batch.add_column(sa.Column('effort', sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('channel_settings') as batch:
        batch.drop_column('effort')
    with op.batch_alter_table('turns') as batch:
        batch.drop_column('stop_reason')
