"""match.table_version: bumped by every write but hidden cards

Revision ID: 5b1e7c2d9a10
Revises: 8db05ee4d502
Create Date: 2026-11-29 16:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '5b1e7c2d9a10'
down_revision = '8db05ee4d502'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('match', schema=None) as batch_op:
        batch_op.add_column(sa.Column('table_version', sa.Integer(), server_default='0',
                                      nullable=False))


def downgrade():
    with op.batch_alter_table('match', schema=None) as batch_op:
        batch_op.drop_column('table_version')
