"""match.note: a match's short note ("Oma's 80th"), typed by the players

Revision ID: d5a1c8e3f920
Revises: c3e9a7f2b851
Create Date: 2026-12-04 18:45:00

A plain nullable column, added in place on both engines: the matches stored so far have
no note (issue 44).
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "d5a1c8e3f920"
down_revision = "c3e9a7f2b851"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("match", sa.Column("note", sa.String(length=200), nullable=True))


def downgrade():
    op.drop_column("match", "note")
