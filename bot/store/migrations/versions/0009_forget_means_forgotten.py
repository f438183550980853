"""forget means forgotten: a processed delivery keeps its key only

The inbox's payload (the request body, people's words included) is cleared when the delivery is done,
so it becomes nullable; the bodies of deliveries already done go now.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbox', schema=None) as batch_op:
        batch_op.alter_column('payload', existing_type=sa.Text(), nullable=True)
    op.execute("UPDATE inbox SET payload = NULL WHERE done_at IS NOT NULL")


def downgrade() -> None:
    op.execute("DELETE FROM inbox WHERE payload IS NULL")  # done ones: a key without a body cannot stay
    with op.batch_alter_table('inbox', schema=None) as batch_op:
        batch_op.alter_column('payload', existing_type=sa.Text(), nullable=False)
