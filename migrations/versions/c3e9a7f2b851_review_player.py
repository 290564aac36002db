"""review_player: each player's game in a kept review, summed for the household's pages

Revision ID: c3e9a7f2b851
Revises: a8f3c61d2e94
Create Date: 2026-12-04 16:45:00

Derived data (issue 45): a new table on both engines, cascading with its game and match,
written in the write that stores a game's review. The reviews kept so far have no sums,
so they are dropped: the server's background process reviews every finished game again
(a history's when nothing else waits), and `flask rebuild` does it at once.
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "c3e9a7f2b851"
down_revision = "a8f3c61d2e94"
branch_labels = None
depends_on = None


def upgrade():
    op.execute("DELETE FROM review_card")
    op.create_table(
        "review_player",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("cost", sa.Double(), nullable=False),
        sa.Column("good", sa.Integer(), nullable=False),
        sa.Column("plays", sa.Integer(), nullable=False),
        sa.Column("costliest", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["game.id"], name=op.f("fk_review_player_game_id_game"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["match.id"],
            name=op.f("fk_review_player_match_id_match"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_review_player_player_id_player")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_player")),
        sa.UniqueConstraint("game_id", "player_id", name="uq_review_player_game"),
    )
    op.create_index(
        "ix_review_player_match",
        "review_player",
        ["match_id", "player_id", "game_id", "cost", "good", "plays", "costliest"],
        unique=False,
    )


def downgrade():
    op.drop_index("ix_review_player_match", table_name="review_player")
    op.drop_table("review_player")
