"""many workspaces: slack-sdk's installation and OAuth state tables, and departed workspaces

The three slack_* tables are exactly those slack-sdk's SQLAlchemyInstallationStore and
SQLAlchemyOAuthStateStore define (tests/store/test_installation_tables.py compares them): Bolt's
OAuth flow writes them, Threadfork only reads a workspace's bot token from them. Written out here,
not imported, so that this revision stays what it was whatever slack-sdk defines later.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def _bot_columns() -> list[sa.Column]:
    """The columns slack_bots and slack_installations share, up to the bot's token expiry."""
    return [
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('client_id', sa.String(length=32), nullable=False),
        sa.Column('app_id', sa.String(length=32), nullable=False),
        sa.Column('enterprise_id', sa.String(length=32), nullable=True),
        sa.Column('enterprise_name', sa.String(length=200), nullable=True),
    ]


def _bot_token_columns() -> list[sa.Column]:
    return [
        sa.Column('team_id', sa.String(length=32), nullable=True),
        sa.Column('team_name', sa.String(length=200), nullable=True),
        sa.Column('bot_token', sa.String(length=200), nullable=True),
        sa.Column('bot_id', sa.String(length=32), nullable=True),
        sa.Column('bot_user_id', sa.String(length=32), nullable=True),
        sa.Column('bot_scopes', sa.String(length=1000), nullable=True),
        sa.Column('bot_refresh_token', sa.String(length=200), nullable=True),
        sa.Column('bot_token_expires_at', sa.DateTime(), nullable=True),
    ]


def upgrade() -> None:
    op.create_table(
        'slack_installations',
        *_bot_columns(),
        sa.Column('enterprise_url', sa.String(length=200), nullable=True),
        *_bot_token_columns(),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('user_token', sa.String(length=200), nullable=True),
        sa.Column('user_scopes', sa.String(length=1000), nullable=True),
        sa.Column('user_refresh_token', sa.String(length=200), nullable=True),
        sa.Column('user_token_expires_at', sa.DateTime(), nullable=True),
        sa.Column('incoming_webhook_url', sa.String(length=200), nullable=True),
        sa.Column('incoming_webhook_channel', sa.String(length=200), nullable=True),
        sa.Column('incoming_webhook_channel_id', sa.String(length=200), nullable=True),
        sa.Column('incoming_webhook_configuration_url', sa.String(length=200), nullable=True),
        sa.Column('is_enterprise_install', sa.Boolean(), nullable=False),
        sa.Column('token_type', sa.String(length=32), nullable=True),
        sa.Column('installed_at', sa.DateTime(), nullable=False),
    )
    op.create_index('slack_installations_idx', 'slack_installations',
                    ['client_id', 'enterprise_id', 'team_id', 'user_id', 'installed_at'])
    op.create_table(
        'slack_bots',
        *_bot_columns(),
        *_bot_token_columns(),
        sa.Column('is_enterprise_install', sa.Boolean(), nullable=False),
        sa.Column('installed_at', sa.DateTime(), nullable=False),
    )
    op.create_index('slack_bots_idx', 'slack_bots', ['client_id', 'enterprise_id', 'team_id', 'installed_at'])
    op.create_table(
        'slack_oauth_states',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('state', sa.String(length=200), nullable=False),
        sa.Column('expire_at', sa.DateTime(), nullable=False),
    )
    op.create_table(
        'departures',
        sa.Column('team_id', sa.String(length=32), primary_key=True),
        sa.Column('departed_at', sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table('departures')
    op.drop_table('slack_oauth_states')
    op.drop_index('slack_bots_idx', table_name='slack_bots')
    op.drop_table('slack_bots')
    op.drop_index('slack_installations_idx', table_name='slack_installations')
    op.drop_table('slack_installations')
