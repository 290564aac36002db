"""PostgreSQL: a trigger on match sends NOTIFY companion_match, '<id>' in every write

Revision ID: 0a6d3c1e2f47
Revises: 9c4d2e7f1a35
Create Date: 2026-12-01 06:40:00

Each server process LISTENs and pushes the change to the match's open pages
(companion.storage.feed). The NOTIFY is sent inside the writing transaction, so it is
delivered at the commit, whichever process, server or command wrote. SQLite has no
such thing: there each process watches the file (nothing to migrate).
"""
from alembic import op

# As companion.storage.postgresql makes them with the table (written out: a revision stays as it was).
NOTIFY_FUNCTION = """
CREATE OR REPLACE FUNCTION companion_match_changed() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('companion_match', OLD.id::text);
    ELSE
        PERFORM pg_notify('companion_match', NEW.id::text);
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
NOTIFY_TRIGGER = """
CREATE TRIGGER match_changed AFTER INSERT OR UPDATE OR DELETE ON match
FOR EACH ROW EXECUTE FUNCTION companion_match_changed()
"""


# revision identifiers, used by Alembic.
revision = '0a6d3c1e2f47'
down_revision = '9c4d2e7f1a35'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(NOTIFY_FUNCTION)
        op.execute(NOTIFY_TRIGGER)


def downgrade():
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP TRIGGER IF EXISTS match_changed ON match')
        op.execute('DROP FUNCTION IF EXISTS companion_match_changed()')
