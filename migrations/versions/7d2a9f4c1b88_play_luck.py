"""play_luck: each placed play's chance of taking a row and its expected bulls

Revision ID: 7d2a9f4c1b88
Revises: 53ba1a5dd96c
Create Date: 2026-12-03 04:30:00

Derived data (``companion.derived.play_luck``), empty here: the server's start fills it in
the background for games played before it existed, as after an import.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '7d2a9f4c1b88'
down_revision = '53ba1a5dd96c'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('play_luck',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('round_number', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('card', sa.Integer(), nullable=False),
    sa.Column('chance', sa.Double(), nullable=False),
    sa.Column('expected', sa.Double(), nullable=False),
    sa.Column('bulls', sa.Integer(), nullable=False),
    sa.Column('samples', sa.Integer(), nullable=False),
    sa.Column('whole', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['game.id'], name=op.f('fk_play_luck_game_id_game'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['match_id'], ['match.id'], name=op.f('fk_play_luck_match_id_match'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], name=op.f('fk_play_luck_player_id_player')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_play_luck')),
    sa.UniqueConstraint('game_id', 'round_number', 'player_id', name='uq_play_luck_player')
    )
    with op.batch_alter_table('play_luck', schema=None) as batch_op:
        batch_op.create_index('ix_play_luck_match', ['match_id', 'player_id', 'game_id', 'whole', 'round_number', 'expected', 'bulls', 'chance'], unique=False)


def downgrade():
    with op.batch_alter_table('play_luck', schema=None) as batch_op:
        batch_op.drop_index('ix_play_luck_match')
    op.drop_table('play_luck')
