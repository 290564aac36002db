"""One import at a time: a second is refused at once (409), never left waiting. The page
takes the turn once the file has arrived, so a slow upload holds nobody up meanwhile; the
command line takes it before it reads its file.

Each test holds the turn itself, the way another import would (a thread of this server,
another server process, another server on the same PostgreSQL), and then imports.
"""

import fcntl
import html
import io
import json
import os
import re
import threading
from contextlib import contextmanager

import pytest
from backups import export, household, shifted, snapshot, upload
from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

from companion.backup import apart
from companion.db import db
from companion.storage import imports as engines

pytestmark = pytest.mark.database

RUNNING = "Another import is running. Try again when it is done."


@pytest.fixture
def document(client):
    """A household's history as a file whose matches are all new to ``client``'s database."""
    household(client)
    return shifted(export(client))


class Unread(io.RawIOBase):
    """A 64 MB request body that is never sent: it notes whether anything read from it."""

    SIZE = 64 * 1024 * 1024 - 1024

    def __init__(self) -> None:
        self.position, self.read_from = 0, False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.position = self.SIZE if whence == io.SEEK_END else offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        self.read_from = True
        return 0


def post_unread(client, path="/backup/import", **headers):
    """Post an import whose body is never read by the test client: the answer, and
    whether the app read any of it."""
    body = Unread()
    response = client.post(
        path,
        input_stream=body,
        content_type="multipart/form-data; boundary=unread",
        headers=headers,
    )
    return response, body.read_from


@contextmanager
def another_import(app):
    """Another thread of this server holds the turn to import until the block ends."""
    holding, done = threading.Event(), threading.Event()

    def hold() -> None:
        with app.app_context(), apart.import_turn():
            holding.set()
            done.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(10)
        yield
    finally:
        done.set()
        thread.join(10)


@contextmanager
def another_process_imports(app):
    """Another process of this server (or another server) holds the database's import lock."""
    with app.app_context():
        connection = db.engine.connect()
    with connection, engines.only_import(connection):
        yield


def refused_at_once(client, path="/backup/import", **headers) -> str:
    """Post an import while another runs: a 409 by the file field, once the file has
    arrived and before it is looked at (it is not even JSON)."""
    not_json = {"file": (io.BytesIO(b"not even JSON"), "b.json")}
    response = client.post(path, data=not_json, headers=headers)
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 409, page[:400]
    assert 'aria-invalid="true"' in page
    return page


def import_address(client) -> str:
    """The import form's address, with this phone's CSRF token in it."""
    page = client.get("/backup").get_data(as_text=True)
    (action,) = set(re.findall(r'action="(/backup/import\?csrf_token=[^"]+)"', page))
    return html.unescape(action)


def test_an_import_while_another_runs_is_refused_before_its_file_is_checked(app, client, document):
    before = snapshot(app)
    app.config["WTF_CSRF_ENABLED"] = True  # the token is in the address: checked first
    address = import_address(client)
    with another_import(app):
        assert RUNNING in refused_at_once(client, address)
        german = refused_at_once(client, address, **{"Accept-Language": "de"})
        assert "Es läuft schon ein Import." in german
        with_file = {"file": (io.BytesIO(json.dumps(document).encode()), "b.json")}
        assert client.post(address, data=with_file).status_code == 409  # a real file: the same
    assert snapshot(app) == before
    app.config["WTF_CSRF_ENABLED"] = False
    assert upload(client, document).status_code == 303  # once it is done, it works
    assert "Matches added: 2" in client.get("/backup").get_data(as_text=True)


def test_an_upload_without_the_token_never_takes_the_turn(app, client, document):
    """The finding: a slow upload without a CSRF token held the one turn (taken before
    the token, which was in the form), so every real import got 409 until it closed.
    The token comes first now, from the address: refused (422) while another import
    holds the turn, with none of its body read and no turn taken."""
    app.config["WTF_CSRF_ENABLED"] = True
    with another_import(app):
        for path in ("/backup/import", "/backup/import?csrf_token=forged"):
            response, read = post_unread(client, path)
            assert response.status_code == 422 and not read
            page = html.unescape(response.get_data(as_text=True))
            assert "Nothing was saved" in page and RUNNING not in page
            assert 'aria-invalid="true"' in page  # by the file field: choose it again
    before = snapshot(app)
    assert post_unread(client)[0].status_code == 422  # and it took no turn: the next one
    assert post_unread(client, import_address(client))[1]  # with the token reads its file
    assert snapshot(app) == before


def test_the_refusal_replaces_the_form_when_htmx_sent_it(app, client):
    with another_import(app):
        page = refused_at_once(client, **{"HX-Request": "true"})
    assert RUNNING in page and "<html" not in page


@pytest.mark.sqlite_only("the import lock file beside the database")
def test_an_import_in_another_server_process_refuses_it_too(app, client, document):
    before = snapshot(app)
    with app.app_context():
        path = db.engine.url.database
    descriptor = os.open(f"{path}.import", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # another server process is importing
        assert RUNNING in refused_at_once(client)
    finally:
        os.close(descriptor)
    assert snapshot(app) == before
    assert upload(client, document).status_code == 303


@pytest.mark.postgresql
def test_an_import_on_another_server_refuses_it_too(app, client, document):
    before = snapshot(app)
    with app.app_context():
        other = db.engine.connect()  # another server importing: the advisory lock
    try:
        other.execute(db.select(db.func.pg_advisory_lock(engines.IMPORT_LOCK_KEY)))
        assert RUNNING in refused_at_once(client)
    finally:
        other.close()  # its session ends, and the lock with it
    assert snapshot(app) == before
    assert upload(client, document).status_code == 303


def test_the_command_line_refuses_at_once_in_one_line(app, client, document, tmp_path):
    file = tmp_path / "backup.json"
    file.write_text(json.dumps(document))
    before = snapshot(app)
    runner = app.test_cli_runner()
    with another_process_imports(app):
        result = runner.invoke(args=["import", str(file)])
        assert result.exit_code == 1, result.output
        assert result.output == f"Error: {RUNNING}\n"
        # Decided before the file is read: a missing file is not even looked for.
        missing = runner.invoke(args=["import", str(tmp_path / "missing.json")])
        assert missing.output == f"Error: {RUNNING}\n"
    assert snapshot(app) == before
    result = runner.invoke(args=["import", str(file)])
    assert result.exit_code == 0, result.output
    assert "Matches: 2 added" in result.output


class Trickle(io.RawIOBase):
    """A request body that arrives slowly: its first half at once, the rest only when the
    test lets it go (``rest``); ``half_sent`` once the app has read the first half."""

    def __init__(self, body: bytes) -> None:
        self.body, self.position = body, 0
        self.half_sent, self.rest = threading.Event(), threading.Event()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:  # the test client measures the body so
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.position = len(self.body) if whence == io.SEEK_END else offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        half = len(self.body) // 2
        if self.position >= half:
            self.half_sent.set()
            assert self.rest.wait(60), "the test never sent the rest"
            half = len(self.body)
        chunk = self.body[self.position : min(half, self.position + len(buffer))]
        buffer[: len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)


def test_a_slow_upload_holds_nobody_up_while_it_arrives(app, client, document):
    """The finding (issue 55): an upload that trickled in held the one turn to import from
    its first byte, and six other imports got 409 over 25 s. The turn is taken once the
    file has arrived: another import goes through while the slow one is still arriving,
    and the slow one after it."""
    file = FileStorage(io.BytesIO(json.dumps(document).encode()), "b.json")
    boundary, body = encode_multipart({"file": file})
    slow, answers, slow_phone = Trickle(body), [], app.test_client()

    def post_slowly() -> None:
        response = slow_phone.post(
            "/backup/import",
            input_stream=slow,
            content_type=f"multipart/form-data; boundary={boundary}",
        )
        answers.append(response.status_code)

    arriving = threading.Thread(target=post_slowly)
    arriving.start()
    try:
        assert slow.half_sent.wait(30), "the app never read the upload"
        assert upload(client, document).status_code == 303  # meanwhile: not 409
        assert "Matches added: 2" in client.get("/backup").get_data(as_text=True)
        assert arriving.is_alive()  # still arriving
    finally:
        slow.rest.set()
        arriving.join(60)
    assert answers == [303]  # once it is all there: the same matches, kept
    assert "Matches already here (left as they are): 2" in slow_phone.get("/backup").get_data(
        as_text=True
    )
