"""initial empty revision

Revision ID: f65081e3da62
Revises: 
Create Date: 2026-11-29 12:06:54.139709

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f65081e3da62'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
