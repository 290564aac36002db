"""The backup's times on SQLite: the import's quick text is the one SQLAlchemy stores, and
the export reads that text back as the time it is."""

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import DateTime, create_engine

from companion.backup.fields import stamp, stored_stamp
from companion.storage.imports import sqlite_text

SQLITE = create_engine("sqlite://").dialect
STORED = DateTime().dialect_impl(SQLITE).bind_processor(SQLITE)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31, 23, 59)))
def test_the_quick_text_is_sqlalchemys_for_every_time_a_backup_holds(moment):
    assert sqlite_text(moment) == STORED(moment)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31, 23, 59)))
def test_the_export_writes_the_stored_text_as_the_time_it_is(moment):
    assert stored_stamp(STORED(moment)) == stamp(moment) == stored_stamp(moment)


def test_a_whole_second_keeps_its_microseconds():
    assert sqlite_text(datetime(2026, 12, 2, 9, 58)) == "2026-12-02 09:58:00.000000"
