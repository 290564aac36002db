"""match.input_version: bumped by every write that changes what a replay reads

Revision ID: f4c8b2e6a913
Revises: e6a2d9c4b713
Create Date: 2026-12-06 09:30:00

Issue 59: a round's luck and a game's review are stored in writes of their own that
raise the match's version and table_version (every phone shows them), yet change nothing
a replay reads. While input_version stays, a server takes the replay it made at an
earlier table version instead of replaying the match again. Every match starts at 0: the
first replay after the upgrade is made from the rows, as before.
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "f4c8b2e6a913"
down_revision = "e6a2d9c4b713"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("input_version", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade():
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_column("input_version")
