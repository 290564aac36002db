"""match.links_renewed_at: when a match's links were last made new

Revision ID: b4e81f0c2d57
Revises: 7d2a9f4c1b88
Create Date: 2026-12-03 16:50:00

A plain nullable column, added in place on both engines. A rematch's phones follow it
from the match before only while its links are the ones it was started with (issue 41).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b4e81f0c2d57'
down_revision = '7d2a9f4c1b88'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('match', sa.Column('links_renewed_at', sa.DateTime(), nullable=True))


def downgrade():
    op.drop_column('match', 'links_renewed_at')
