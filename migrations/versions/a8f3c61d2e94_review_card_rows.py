"""review_card: a too-low card's four rows, counted to the game's end

Revision ID: a8f3c61d2e94
Revises: e2b7c4d9a1f6
Create Date: 2026-12-04 16:05:00

Derived data (issue 45): the reviews kept so far have no rows' figures, so they are
dropped; the server's background process reviews every finished game again (a history's
when nothing else waits), and `flask rebuild` does it at once.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a8f3c61d2e94'
down_revision = 'e2b7c4d9a1f6'
branch_labels = None
depends_on = None

ROWS = ('row_1', 'row_2', 'row_3', 'row_4')


def upgrade():
    op.execute('DELETE FROM review_card')
    with op.batch_alter_table('review_card', schema=None) as batch_op:
        for name in ROWS:
            batch_op.add_column(sa.Column(name, sa.Double(), nullable=True))
        batch_op.add_column(
            sa.Column('row_loss', sa.Double(), server_default='0', nullable=False)
        )


def downgrade():
    with op.batch_alter_table('review_card', schema=None) as batch_op:
        batch_op.drop_column('row_loss')
        for name in reversed(ROWS):
            batch_op.drop_column(name)
