"""Every stored column has its backup decided (``companion.backup.columns``): in the file,
written anew on import, derived, or left out with its reason. A column added without a
decision fails here, before a household's move can lose it."""

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table

from companion import rules
from companion.backup import columns
from companion.backup.fields import BackupError
from companion.backup.rows import STAGED
from companion.db import db
from companion.models import Match


def test_every_column_of_the_database_is_declared():
    assert columns.undeclared(db.metadata) == []


def test_a_column_added_without_a_decision_is_named():
    metadata = MetaData()
    match = Match.__table__.to_metadata(metadata)
    match.append_column(Column("colour", String(10)))  # a test-only model's new input
    Table("dice", metadata, Column("id", Integer, primary_key=True), Column("eyes", Integer))
    assert sorted(columns.undeclared(metadata)) == ["dice.eyes", "dice.id", "match.colour"]


def test_what_is_declared_is_a_column_with_a_reason():
    kinds = {columns.FILE, columns.NESTED, columns.COUNTED, columns.PLAYER}
    kinds |= {columns.FRESH, columns.AUTO, columns.LEFT}
    for model, declared in columns.BACKED_UP.items():
        assert set(declared) == {column.name for column in model.__table__.columns}, model
        for name, how in declared.items():
            assert how.kind in kinds and how.says, (model, name)


def test_the_staging_takes_what_is_declared_and_nothing_left_out():
    for model, staged in STAGED.items():
        declared = columns.BACKED_UP.get(model)
        if declared is None:
            assert model in columns.DERIVED
            continue
        left_out = {
            name for name, how in declared.items() if how.kind in (columns.LEFT, columns.AUTO)
        }
        assert set(staged) == set(declared) - left_out, model
    assert "rematch_id" in STAGED[Match]  # the finding: a stored input that was not backed up


def test_the_files_objects_hold_the_fields_their_columns_declare():
    match = columns.FIELDS["match"]
    assert match.always[:5] == ("created_at", "end", "pro", "seats", "games")
    assert match.optional[:1] == ("rematch",)
    assert columns.FIELDS["end"] == columns.Fields(("kind", "value"))
    assert columns.FIELDS["player"] == columns.Fields(("name", "archived", "created_at"))
    assert columns.VERSION >= 2  # round times and rematches came in version 2


def test_a_text_field_is_read_through_the_rule_that_checks_it():
    read = columns.text(rules.player_name)
    assert read({"name": "Anna"}, "name") == "Anna"
    with pytest.raises(BackupError) as refused:
        read({"name": "x" * 31}, "name")
    assert refused.value.message() == "A name has at most 30 characters."
    with pytest.raises(BackupError) as refused:
        read({"name": 31}, "name")
    assert refused.value.message() == "“name” must be a text."
