"""What a phone's connection meets on the real servers: gunicorn's gevent workers
(``python -m companion.serve``) and its one worker in the launcher's own process
(``--workers 1``, a small machine's).

A body too large for the app is refused without being read: the answer closes the
connection (or the connection goes on working), so the phone's next request on it is
answered instead of meeting a connection the server has dropped. Neither server says
what software it is.
"""

import http.client

import pytest
from phones import start_server, stop

BIG = 100 * 1024  # past MAX_CONTENT_LENGTH (64 KB), and past what gunicorn drains
SERVERS = {"gunicorn": 2, "one worker": 1}


@pytest.fixture(scope="module", params=SERVERS)
def port(request, tmp_path_factory):
    """A running server of each kind, for the module."""
    server, port = start_server(tmp_path_factory.mktemp(request.param), SERVERS[request.param])
    yield port
    stop(server)


def oversized(connection: http.client.HTTPConnection, path: str, content_type: str) -> int:
    """Send a BIG body to ``path``; its status, the answer read to the end."""
    connection.request("POST", path, body=b"x" * BIG, headers={"Content-Type": content_type})
    response = connection.getresponse()
    response.read()
    if (response.getheader("Connection") or "").lower() == "close":
        assert connection.sock is None  # http.client opens a new one for the next request
    return response.status


@pytest.mark.parametrize(
    ("path", "content_type", "code"),
    [
        ("/players/", "application/x-www-form-urlencoded", 413),
        ("/api/resolve", "application/json", 400),
    ],
)
def test_the_request_after_a_body_too_large_is_answered(port, path, content_type, code):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        assert oversized(connection, path, content_type) == code
        connection.request("GET", "/healthz")  # on the same connection, if still open
        response = connection.getresponse()
        response.read()
        assert response.status == 200
    finally:
        connection.close()


def test_no_answer_names_the_server_software(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        assert response.getheader("Server") in (None, "companion")
    finally:
        connection.close()
