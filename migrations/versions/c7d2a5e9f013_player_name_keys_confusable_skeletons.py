"""player names: keys as confusable skeletons (UTS #39)

Revision ID: c7d2a5e9f013
Revises: b4e81f0c2d57
Create Date: 2026-12-03 17:30:00

Keys were NFKC_Casefold: "Anna" and "Anna" with a Cyrillic A (U+0410) were two players. Every key
is computed again as ``companion.rules.names.name_key`` computes it at this revision
(NFKC_Casefold, then disarm's skeleton). Lookalikes stored before keep their history
apart, never merged: the oldest keeps its name, each later one gets its id beside it,
"Anna (7)", or "Player 7" when that is taken too. Nothing else changes: the columns and
the unique key on ``name_key`` are as they were.
"""
import re
import unicodedata

from alembic import op
from disarm import skeleton_key
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c7d2a5e9f013'
down_revision = 'b4e81f0c2d57'
branch_labels = None
depends_on = None

MAX_NAME = 30
IGNORABLE = re.compile(
    '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e'
    '\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8'
    '\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]'
)


def name_key(name):
    """companion.rules.names.name_key at this revision."""
    text = IGNORABLE.sub('', unicodedata.normalize('NFKC', name))
    folded = unicodedata.normalize('NFKC', text.casefold())
    return ' '.join(skeleton_key(folded).split())


def candidates(name, player_id):
    """The names to try for a player, best first."""
    suffix = f' ({player_id})'
    yield name
    yield name[: MAX_NAME - len(suffix)].rstrip() + suffix
    yield f'Player {player_id}'
    number = 2
    while True:
        yield f'Player {player_id} ({number})'
        number += 1


def upgrade():
    connection = op.get_bind()
    rows = connection.execute(sa.text('SELECT id, name, name_key FROM player ORDER BY id')).all()
    taken, changes = set(), {}
    for row in rows:  # the oldest first: it keeps its name
        name = next(name for name in candidates(row.name, row.id) if name_key(name) not in taken)
        taken.add(name_key(name))
        if (name, name_key(name)) != (row.name, row.name_key):
            changes[row.id] = (name, name_key(name))
    # Two steps, as the unique key is checked row by row: first free the keys that move
    # (no key is a space and digits: names are tidied), then write the new ones.
    free = sa.text('UPDATE player SET name_key = :key WHERE id = :id')
    for player_id in changes:
        connection.execute(free, {'key': f' {player_id}', 'id': player_id})
    update = sa.text('UPDATE player SET name = :name, name_key = :key WHERE id = :id')
    for player_id, (name, key) in changes.items():
        connection.execute(update, {'name': name, 'key': key, 'id': player_id})


def downgrade():
    # The keys stay as computed here, and the names given apart stay apart: an older
    # companion compares a new name by its own key, so it may take a lookalike again.
    pass
