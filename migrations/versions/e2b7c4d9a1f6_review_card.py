"""review_card: each play of a finished game weighed against the rest of the hand

Revision ID: e2b7c4d9a1f6
Revises: c7d2a5e9f013
Create Date: 2026-12-03 20:10:00

Derived data (issue 45), figured by the server's background process after a game's end:
a new table on both engines, cascading with its game and match.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e2b7c4d9a1f6'
down_revision = 'c7d2a5e9f013'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'review_card',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_id', sa.Integer(), nullable=False),
        sa.Column('match_id', sa.Integer(), nullable=False),
        sa.Column('round_number', sa.Integer(), nullable=False),
        sa.Column('player_id', sa.Integer(), nullable=False),
        sa.Column('card', sa.Integer(), nullable=False),
        sa.Column('played', sa.Boolean(), nullable=False),
        sa.Column('this_round', sa.Double(), nullable=False),
        sa.Column('to_game_end', sa.Double(), nullable=False),
        sa.Column('noise', sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['game.id'], name=op.f('fk_review_card_game_id_game'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['match_id'], ['match.id'], name=op.f('fk_review_card_match_id_match'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['player_id'], ['player.id'], name=op.f('fk_review_card_player_id_player')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_review_card')),
        sa.UniqueConstraint(
            'game_id', 'round_number', 'player_id', 'card', name='uq_review_card_hand'
        ),
    )
    op.create_index('ix_review_card_match', 'review_card', ['match_id'], unique=False)


def downgrade():
    op.drop_index('ix_review_card_match', table_name='review_card')
    op.drop_table('review_card')
