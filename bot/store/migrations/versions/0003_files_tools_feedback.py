"""files shared with turns (content-addressed), server tool counts per answer, feedback

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('files',
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('media_type', sa.String(length=100), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('file_id', sa.String(length=100), nullable=True),
    sa.Column('text', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('sha256')
    )
    op.create_table('attachments',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('turn_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('slack_file_id', sa.String(length=32), nullable=False),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['sha256'], ['files.sha256'], ),
    sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_attachments_turn', 'attachments', ['turn_id'], unique=False)
    op.create_index('ix_attachments_slack_file', 'attachments', ['slack_file_id'], unique=False)
    op.create_table('feedback',
    sa.Column('channel_id', sa.String(length=32), nullable=False),
    sa.Column('message_ts', sa.String(length=32), nullable=False),
    sa.Column('user_id', sa.String(length=32), nullable=False),
    sa.Column('value', sa.String(length=8), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('channel_id', 'message_ts', 'user_id')
    )
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('has_files', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('searches', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('fetches', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('fetches')
        batch_op.drop_column('searches')
        batch_op.drop_column('has_files')
    op.drop_table('feedback')
    op.drop_index('ix_attachments_slack_file', table_name='attachments')
    op.drop_index('ix_attachments_turn', table_name='attachments')
    op.drop_table('attachments')
    op.drop_table('files')
