"""match.rematch_id: the match a finished match's Rematch started

Revision ID: 9c4d2e7f1a35
Revises: 3e0c7a4b9d21
Create Date: 2026-12-01 03:40:00

A plain column and a unique index, added in place on both engines. No foreign key:
SQLite adds one only by copying the match table, and dropping the old table with
foreign keys on cascades to every seat. Deleting a match clears the links to it.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '9c4d2e7f1a35'
down_revision = '3e0c7a4b9d21'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('match', sa.Column('rematch_id', sa.Integer(), nullable=True))
    op.create_index('uq_match_rematch_id', 'match', ['rematch_id'], unique=True)


def downgrade():
    op.drop_index('uq_match_rematch_id', table_name='match')
    op.drop_column('match', 'rematch_id')
