"""pending cards may repeat: two players' equal hidden cards are a typo found at the reveal

Revision ID: a1f3c5e7b902
Revises: b4f2e8a6c913
Create Date: 2026-12-05 19:00:00

Issue 55: refusing a card equal to another player's hidden one at entry told a phone
that card (a 422 naming it, or not). Now every hidden card is taken, and a round whose
cards repeat once the last is in is not placed: the players who typed the same card fix
their own. The unique constraint on (game, round, card) goes; one card a player stays.
"""

import sqlalchemy as sa
from alembic import op


# revision identifiers, used by Alembic.
revision = "a1f3c5e7b902"
down_revision = "b4f2e8a6c913"
branch_labels = None
depends_on = None


def upgrade():
    # A copy put together by hand may lack it (a restore upgrades what it is given).
    names = {each["name"] for each in sa.inspect(op.get_bind()).get_unique_constraints("pending_card")}
    if "uq_pending_card" not in names:
        return
    with op.batch_alter_table("pending_card", schema=None) as batch_op:
        batch_op.drop_constraint("uq_pending_card", type_="unique")


def downgrade():
    # Rounds that wait with a repeated card cannot keep it: those hidden cards go.
    op.execute(
        "DELETE FROM pending_card WHERE game_id IN (SELECT game_id FROM pending_card "
        "GROUP BY game_id, round_number, card HAVING count(*) > 1)"
    )
    with op.batch_alter_table("pending_card", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_pending_card", ["game_id", "round_number", "card"])
