"""review_card: a too-low card's row loss has its noise; round 10 counted exactly

Revision ID: e6a2d9c4b713
Revises: a1f3c5e7b902
Create Date: 2026-12-09 18:40:00

Derived data (issue 56): a play's grade weighs its card and its row together, within
both losses' noise, so the row loss's noise is kept (`row_noise`, 0 on every other
row). The reviews kept so far have no such noise, and their figures to the game's end
sampled the round itself (round 10's were not its exact figure), so they are dropped
with their players' sums: the server's background process reviews every finished game
again, and `flask rebuild` does it at once.
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e6a2d9c4b713"
down_revision = "a1f3c5e7b902"
branch_labels = None
depends_on = None


def upgrade():
    op.execute("DELETE FROM review_player")
    op.execute("DELETE FROM review_card")
    with op.batch_alter_table("review_card", schema=None) as batch_op:
        batch_op.add_column(sa.Column("row_noise", sa.Double(), server_default="0", nullable=False))


def downgrade():
    with op.batch_alter_table("review_card", schema=None) as batch_op:
        batch_op.drop_column("row_noise")
