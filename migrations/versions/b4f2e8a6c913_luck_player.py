"""luck_player: each player's luck over a finished card game, summed for the household

Revision ID: b4f2e8a6c913
Revises: d5a1c8e3f920
Create Date: 2026-12-05 13:00:00

Derived data (issue 44): the household's luck pages summed every play's luck row
(play_luck, 600,000 rows for 5,000 matches) at their first request after a start; now a
row per game and player, written with the game's luck. Filled here from the luck rows
kept so far. play_luck's covering index, kept for that sum alone, becomes a plain one on
the match (the background's look for matches with no luck yet).
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "b4f2e8a6c913"
down_revision = "d5a1c8e3f920"
branch_labels = None
depends_on = None

COVERING = ["match_id", "player_id", "game_id", "whole", "round_number", "expected", "bulls", "chance"]


def upgrade():
    op.create_table(
        "luck_player",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("expected", sa.Double(), nullable=False),
        sa.Column("bulls", sa.Integer(), nullable=False),
        sa.Column("lowest", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["game.id"], name=op.f("fk_luck_player_game_id_game"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["match_id"], ["match.id"], name=op.f("fk_luck_player_match_id_match"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_luck_player_player_id_player")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_luck_player")),
        sa.UniqueConstraint("game_id", "player_id", name="uq_luck_player_game"),
    )
    op.create_index(
        "ix_luck_player_match",
        "luck_player",
        ["match_id", "player_id", "game_id", "expected", "bulls", "lowest"],
        unique=False,
    )
    # A player's game is complete with a row for every round (ten), each figured with the
    # whole hands: companion.derived.play_luck.player_sums.
    op.execute(
        "INSERT INTO luck_player (game_id, match_id, player_id, expected, bulls, lowest) "
        "SELECT game_id, max(match_id), player_id, sum(expected), sum(bulls), "
        "min(CASE WHEN bulls > 0 THEN chance END) FROM play_luck "
        "GROUP BY game_id, player_id "
        "HAVING count(*) = 10 AND sum(CASE WHEN whole THEN 1 ELSE 0 END) = 10"
    )
    op.drop_index("ix_play_luck_match", table_name="play_luck")
    op.create_index("ix_play_luck_match", "play_luck", ["match_id"], unique=False)


def downgrade():
    op.drop_index("ix_play_luck_match", table_name="play_luck")
    op.create_index("ix_play_luck_match", "play_luck", COVERING, unique=False)
    op.drop_index("ix_luck_player_match", table_name="luck_player")
    op.drop_table("luck_player")
