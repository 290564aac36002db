"""player names: NFKC, no invisible characters, keys as NFKC_Casefold

Revision ID: 3e0c7a4b9d21
Revises: 5b1e7c2d9a10
Create Date: 2026-12-02 10:00:00

Names entered before this revision may hold what the name rule now refuses (a zero
width space, a bidi override, stacked accents, fullwidth letters) and their keys were
folded without leaving out the invisible characters: "Anna" and "Anna" + U+200B were two
players. Each name is repaired to one the rule accepts, and every key is computed again.
A repaired name that is now another player's keeps its history under a name of its own,
"Anna (7)" (its id), never merged: the players who keep their names are those whose
names were already valid, then the oldest. Nothing else changes: the columns and the
unique key on ``name_key`` are as they were.

The rule is copied here as it stands at this revision (``companion.rules.names``), so
this migration does the same thing whatever the rule later becomes.
"""
import re
import unicodedata

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3e0c7a4b9d21'
down_revision = '5b1e7c2d9a10'
branch_labels = None
depends_on = None

MAX_NAME = 30
MAX_MARKS = 3
REFUSED = frozenset({'Cc', 'Cf', 'Cs'})
IGNORABLE = re.compile(
    '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e'
    '\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8'
    '\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]'
)


def name_key(name):
    """companion.rules.names.name_key at this revision."""
    text = IGNORABLE.sub('', unicodedata.normalize('NFKC', name))
    return ' '.join(unicodedata.normalize('NFKC', text.casefold()).split())


def repaired(name):
    """``name`` made one the rule accepts: NFKC, no Cc/Cf/Cs, at most MAX_MARKS marks on
    a letter, spaces tidied, at most MAX_NAME characters ('' if nothing is left)."""
    text = unicodedata.normalize('NFKC', name)
    text = ''.join(char for char in text if unicodedata.category(char) not in REFUSED)
    kept, run = [], 0
    for char in unicodedata.normalize('NFD', text):
        run = run + 1 if unicodedata.category(char).startswith('M') else 0
        if run <= MAX_MARKS:
            kept.append(char)
    text = ' '.join(unicodedata.normalize('NFKC', ''.join(kept)).split())
    return text[:MAX_NAME].rstrip()


def valid(name):
    """True when ``name`` is one the rule accepts as it is."""
    return bool(name) and repaired(name) == name and bool(name_key(name))


def candidates(name, player_id):
    """The names to try for a player, best first."""
    suffix = f' ({player_id})'
    if valid(name):
        yield name
        yield name[: MAX_NAME - len(suffix)].rstrip() + suffix
    yield f'Player {player_id}'
    number = 2
    while True:
        yield f'Player {player_id} ({number})'
        number += 1


def upgrade():
    connection = op.get_bind()
    rows = connection.execute(sa.text('SELECT id, name, name_key FROM player')).all()
    # Those whose names stay keep them first, then the oldest.
    rows.sort(key=lambda row: (not valid(row.name), row.id))
    taken, changes = set(), {}
    for row in rows:
        for name in candidates(repaired(row.name), row.id):
            if valid(name) and name_key(name) not in taken:
                break
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
    # The names' old spellings are not kept: they were the lookalikes this revision
    # removes. The keys as computed here are still unique keys of the old rule's kind.
    pass
