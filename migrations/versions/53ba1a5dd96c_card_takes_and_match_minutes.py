"""card_take, match_rating, and player_match_stat's minutes and figures: the year's review reads sums

Revision ID: 53ba1a5dd96c
Revises: 3c52b9e9d676
Create Date: 2026-12-01 22:15:58.259949

All derived data (``companion.derived``): the bulls each card took, each player's
rating after each finished match, and a match's minutes, its cleanest game and each
player's 55s, worst round and best game's number. The match statistics are made
again rather than filled in here: player_match_stat is dropped and created with its
new columns, and the server's start finds matches without statistics and rebuilds
every derived row from the stored inputs (``companion.store.fill_statistics``; a
backup's trial does the same), card takes and ratings included. Nothing references
player_match_stat, and dropping it is the one way SQLite takes NOT NULL columns
without a default.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '53ba1a5dd96c'
down_revision = '3c52b9e9d676'
branch_labels = None
depends_on = None


def match_stat_table(*more):
    """player_match_stat, empty, with the columns given after its own."""
    op.create_table('player_match_stat',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('played_at', sa.DateTime(), nullable=False),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.Column('bulls', sa.Integer(), nullable=False),
    sa.Column('best_game', sa.Integer(), nullable=False),
    sa.Column('worst_game', sa.Integer(), nullable=False),
    sa.Column('finished', sa.Boolean(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=True),
    sa.Column('won', sa.Boolean(), nullable=False),
    sa.Column('winners', sa.Integer(), nullable=False),
    *more,
    sa.ForeignKeyConstraint(['match_id'], ['match.id'], name=op.f('fk_player_match_stat_match_id_match'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], name=op.f('fk_player_match_stat_player_id_player')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_player_match_stat')),
    sa.UniqueConstraint('match_id', 'player_id', name='uq_match_stat_player'),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('player_match_stat', schema=None) as batch_op:
        batch_op.create_index('ix_match_stat_played', ['played_at', 'match_id'], unique=False)
        batch_op.create_index('ix_match_stat_player', ['player_id'], unique=False)


def upgrade():
    op.create_table('card_take',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('card', sa.Integer(), nullable=False),
    sa.Column('bulls', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['game.id'], name=op.f('fk_card_take_game_id_game'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['match_id'], ['match.id'], name=op.f('fk_card_take_match_id_match'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], name=op.f('fk_card_take_player_id_player')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_card_take')),
    sa.UniqueConstraint('game_id', 'card', name='uq_card_take_card')
    )
    with op.batch_alter_table('card_take', schema=None) as batch_op:
        batch_op.create_index('ix_card_take_match', ['match_id', 'player_id', 'card', 'bulls'], unique=False)
    op.create_table('match_rating',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('played_at', sa.DateTime(), nullable=False),
    sa.Column('mu', sa.Double(), nullable=False),
    sa.Column('sigma', sa.Double(), nullable=False),
    sa.ForeignKeyConstraint(['match_id'], ['match.id'], name=op.f('fk_match_rating_match_id_match'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], name=op.f('fk_match_rating_player_id_player')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_match_rating')),
    sa.UniqueConstraint('match_id', 'player_id', name='uq_match_rating_player')
    )
    with op.batch_alter_table('match_rating', schema=None) as batch_op:
        batch_op.create_index('ix_match_rating_played', ['played_at', 'match_id'], unique=False)
        batch_op.create_index('ix_match_rating_player', ['player_id', 'played_at', 'match_id', 'mu', 'sigma'], unique=False)
    op.drop_table('player_match_stat')
    match_stat_table(
        sa.Column('minutes', sa.Integer(), nullable=False),
        sa.Column('best_game_number', sa.Integer(), nullable=False),
        sa.Column('clean_game', sa.Integer(), nullable=False),
        sa.Column('clean_bulls', sa.Integer(), nullable=False),
        sa.Column('fives', sa.Integer(), nullable=False),
        sa.Column('worst_round', sa.Integer(), nullable=False),
        sa.Column('worst_round_game', sa.Integer(), nullable=True),
        sa.Column('worst_round_number', sa.Integer(), nullable=True),
    )


def downgrade():
    op.drop_table('player_match_stat')
    match_stat_table()
    op.drop_table('match_rating')
    op.drop_table('card_take')
