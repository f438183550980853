"""everything keyed by workspace too: a Slack Connect channel has one id in every workspace

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

# a row written before had one workspace only: the one its channel's sessions belong to
_TEAM_OF_CHANNEL = ("COALESCE((SELECT s.team_id FROM sessions s WHERE s.channel_id = {table}.channel_id "
                    "AND s.kind = 'parent' LIMIT 1), '')")


def _rekey(name: str, columns: list[sa.Column], keys: list[str], team_from: str) -> None:
    """Rebuild a table with team_id first in its primary key (a PK cannot be altered on SQLite; a
    copy, not a rename, so PostgreSQL's constraint names stay free for the new table)."""
    op.execute(f"CREATE TABLE {name}_old AS SELECT * FROM {name}")
    op.drop_table(name)
    op.create_table(name, sa.Column('team_id', sa.String(length=32), nullable=False), *columns,
                    sa.PrimaryKeyConstraint('team_id', *keys))
    names = ", ".join(c.name for c in columns)
    op.execute(f"INSERT INTO {name} (team_id, {names}) SELECT {team_from}, {names} FROM {name}_old")
    op.drop_table(f"{name}_old")


def upgrade() -> None:
    op.execute("UPDATE sessions SET team_id = '' WHERE team_id IS NULL")
    op.execute("UPDATE sessions SET parent_key = team_id || ':' || channel_id WHERE kind = 'parent'")
    op.drop_index('ix_sessions_channel', table_name='sessions')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.alter_column('team_id', existing_type=sa.String(length=32), nullable=False, server_default='')
        batch_op.alter_column('parent_key', existing_type=sa.String(length=32), type_=sa.String(length=80))
        batch_op.drop_constraint('uq_fork_number', type_='unique')
        batch_op.create_unique_constraint('uq_fork_number', ['team_id', 'channel_id', 'number'])
    op.create_index('ix_sessions_channel', 'sessions', ['channel_id', 'team_id', 'kind', 'status'], unique=False)
    _rekey('messages', [sa.Column('channel_id', sa.String(length=32), nullable=False),
                        sa.Column('ts', sa.String(length=32), nullable=False),
                        sa.Column('session_id', sa.Integer(), sa.ForeignKey('sessions.id'), nullable=False)],
           ['channel_id', 'ts'], "(SELECT s.team_id FROM sessions s WHERE s.id = messages_old.session_id)")
    _rekey('feedback', [sa.Column('channel_id', sa.String(length=32), nullable=False),
                        sa.Column('message_ts', sa.String(length=32), nullable=False),
                        sa.Column('user_id', sa.String(length=32), nullable=False),
                        sa.Column('value', sa.String(length=8), nullable=False),
                        sa.Column('created_at', sa.DateTime(), nullable=False)],
           ['channel_id', 'message_ts', 'user_id'], _TEAM_OF_CHANNEL.format(table="feedback_old"))


def downgrade() -> None:
    raise NotImplementedError("0004 merges nothing back: a store keyed by workspace cannot be unkeyed safely")
