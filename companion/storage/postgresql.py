"""What PostgreSQL needs, and only PostgreSQL: its locks and its change notifications.

- Writes of the same matches queue on their rows (``lock_rows``), each for WRITE_WAIT at
  most (``lock_timeout``); writes of other matches run side by side.
- Advisory locks, each under a key of its own: one import at a time, match rows added in
  the order of commits, servers starting together migrating one after the other.
- A trigger on ``match`` sends ``NOTIFY companion_match, '<id>'`` inside the writing
  transaction, so it is heard at the commit; ``listen`` follows it for the live streams
  (``companion.storage.feed``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import DDL, Connection, Engine, event, func, select, text

from companion.models import Match

if TYPE_CHECKING:
    from companion.storage.feed import Feed

# Advisory lock keys: any numbers that nothing else on the server uses, one per lock.
IMPORT_LOCK_KEY = 61041000  # one import at a time (companion.storage.imports)
MATCH_ROWS_LOCK = 61041001  # match rows added in commit order (in_commit_order)
MIGRATING = 61041002  # servers starting together migrate one at a time

CHANNEL = "companion_match"
LISTEN_WAIT = 1.0  # seconds the watcher waits for a notification at a time

# The trigger, made with the table (tests, create_all) and by the migration 0a6d3c1e2f47.
NOTIFY_FUNCTION = f"""
CREATE OR REPLACE FUNCTION companion_match_changed() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('{CHANNEL}', OLD.id::text);
    ELSE
        PERFORM pg_notify('{CHANNEL}', NEW.id::text);
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
NOTIFY_TRIGGER = """
CREATE TRIGGER match_changed AFTER INSERT OR UPDATE OR DELETE ON match
FOR EACH ROW EXECUTE FUNCTION companion_match_changed()
"""
for statement in (NOTIFY_FUNCTION, NOTIFY_TRIGGER):
    event.listen(Match.__table__, "after_create", DDL(statement).execute_if(dialect="postgresql"))


def lock_timeout(wait: float, local: bool = True) -> str:
    """The statement that waits ``wait`` seconds at most for a lock, for the transaction
    (``local``) or the connection: past it, the database's error is BUSY."""
    scope = "SET LOCAL" if local else "SET"
    return f"{scope} lock_timeout = '{round(wait * 1000)}ms'"


def lock_rows(session, match_ids, every_match: bool, wait: float) -> None:
    """Queue this write behind the others of the same matches (their rows), for at most
    ``wait`` seconds: past it, the database's error becomes a 503 (web.faults)."""
    session.execute(text(lock_timeout(wait)))
    if match_ids or every_match:
        query = select(Match.id).order_by(Match.id).with_for_update()
        if not every_match:
            query = query.where(Match.id.in_(match_ids))
        session.execute(query)


def in_commit_order(connection: Connection) -> None:
    """Wait for the turn to add match rows, until the transaction ends."""
    connection.execute(select(func.pg_advisory_xact_lock(MATCH_ROWS_LOCK)))


@contextmanager
def migrating_alone(engine: Engine) -> Iterator[None]:
    """Hold the migration lock of every server on this database while the block runs."""
    with engine.connect() as connection:
        connection.execute(select(func.pg_advisory_lock(MIGRATING)))
        connection.commit()
        try:
            yield
        finally:
            connection.execute(select(func.pg_advisory_unlock(MIGRATING)))
            connection.commit()


def listen(feed: Feed) -> None:
    """LISTEN, and read the stamps of the watched matches notified; of all of them when
    the feed asks for a look with nothing notified (``due``, within ``LISTEN_WAIT``)."""
    url = feed.engine.url.set(drivername="postgresql")
    import psycopg  # only on PostgreSQL (the driver is an extra)

    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as connection:
        connection.execute(f"LISTEN {CHANNEL}")
        feed.refresh()  # what changed before the LISTEN, or while it was down
        while feed.watches:
            # Back at the first notification; LISTEN_WAIT bounds the wait, so the
            # watcher stops soon after its last stream.
            notes = connection.notifies(timeout=LISTEN_WAIT, stop_after=1)
            ids = {int(note.payload) for note in notes}
            if ids:
                feed.refresh(ids)
            elif feed.due:  # a look asked for with nothing notified
                feed.refresh()
