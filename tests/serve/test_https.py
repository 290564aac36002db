"""HTTPS at home: COMPANION_CERT and COMPANION_KEY serve the companion over TLS.

A throwaway certificate authority (trustme) signs a certificate for companion.lan and
127.0.0.1, as mkcert does for a household. Over HTTPS the address, the invite's links and
QR codes say https://, and Chromium gives the page what plain HTTP on the home network
never gets: a secure context, and the screen's Wake Lock that keeps a match page awake.
A certificate the server cannot use stops the start in one line.
"""

import base64
import hashlib
import re
import ssl
import subprocess
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import conftest
import pytest
import trustme
from chromium import CHROMIUM, CHROMIUM_ARGS, HTMX_FILE, LAN_HOST, PHONE, SSE_FILE, route_cdn
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import PublicFormat
from phones import FormPhone, NoRedirect, joined, server_env, start_server, stop, wait_for
from playwright.sync_api import expect
from servers import ROOT, SERVE, free_port

from companion import serve
from companion.app import create_app
from companion.db import db
from companion.models import Match

# Every wake lock the page is granted, kept where the test can see it (table.js keeps
# its own inside its closure).
RECORD_WAKE_LOCKS = """
window.heldWakeLocks = [];
if (navigator.wakeLock) {
  const request = navigator.wakeLock.request.bind(navigator.wakeLock);
  navigator.wakeLock.request = (type) => request(type).then((lock) => {
    window.heldWakeLocks.push(lock);
    return lock;
  });
}
"""


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    """A certificate authority made for these tests, as `mkcert -install` makes one."""
    return trustme.CA()


@pytest.fixture
def leaf(authority) -> trustme.LeafCert:
    """The authority's certificate for companion.lan and 127.0.0.1, as
    `mkcert companion.lan 127.0.0.1` makes one."""
    return authority.issue_cert(LAN_HOST, "127.0.0.1")


@pytest.fixture
def certificate(leaf, tmp_path) -> dict[str, str]:
    """COMPANION_CERT and COMPANION_KEY: the certificate and its key, as files."""
    cert, key = tmp_path / "companion.pem", tmp_path / "companion-key.pem"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    leaf.private_key_pem.write_to_path(str(key))
    return {"COMPANION_CERT": str(cert), "COMPANION_KEY": str(key)}


@pytest.fixture
def https_server(tmp_path, certificate):
    """The real server (gunicorn, 2 workers) over HTTPS; yields its port."""
    server, port = start_server(tmp_path, **certificate, COMPANION_TRUSTED_HOSTS=LAN_HOST)
    yield port
    stop(server)


class TrustingPhone(FormPhone):
    """A phone that trusts the household's certificate authority (mkcert's root, installed)."""

    def __init__(self, base: str, authority: trustme.CA):
        super().__init__(base)
        context = ssl.create_default_context()
        authority.configure_trust(context)
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()),
            NoRedirect(),
            urllib.request.HTTPSHandler(context=context),
        )


def test_the_server_serves_https_and_says_so_in_its_address_and_links(
    https_server, authority, tmp_path
):
    port = https_server
    base = f"https://127.0.0.1:{port}"
    assert f"Open {base}/ on this computer" in (tmp_path / "server.log").read_text()
    # The phones' requests come in as https: the invite's links and QR codes carry it.
    app = create_app(conftest.testing_config(tmp_path / "workers.sqlite"))
    _, _, match_id, [phone] = joined(app, base, 1, lambda url: TrustingPhone(url, authority))
    assert phone.request("/healthz") == 200  # the certificate checked against the authority
    invite = phone.page(f"/matches/{match_id}/invite")
    assert f"{base}/matches/{match_id}/join/" in invite  # the player link
    assert set(re.findall(rf"(\w+)://127\.0\.0\.1:{port}/", invite)) == {"https"}
    # Plain http:// to it gets no page, and the log one line, not a traceback (nor one for
    # each connection closed before its handshake, as the server's own probe at start).
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10)
    log = tmp_path / "server.log"
    wait_for(lambda: "[SSL: HTTP_REQUEST] http request" in log.read_text(), seconds=10)
    assert "Traceback" not in log.read_text()


@pytest.fixture
def trusting_browser(browser, leaf, tmp_path):
    """A phone-sized Chromium that trusts the certificate, as a phone that installed the
    authority's root does (Chromium's test switch pins its key; ignoring certificate
    errors instead leaves the page secure but not installable)."""
    conftest.require(HTMX_FILE.exists() and SSE_FILE.exists(), "htmx missing: run `make test`")
    key = x509.load_pem_x509_certificate(leaf.cert_chain_pems[0].bytes()).public_key()
    spki = key.public_bytes(serialization.Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    pin = base64.b64encode(hashlib.sha256(spki).digest()).decode()
    context = browser.browser_type.launch_persistent_context(
        tmp_path / "chromium",
        executable_path=CHROMIUM,
        args=[*CHROMIUM_ARGS, f"--ignore-certificate-errors-spki-list={pin}"],
        **PHONE,
    )
    route_cdn(context)
    yield context
    context.close()


def installability_errors(page) -> set[str]:
    """Why Chromium would not install the page as an app (none: it would)."""
    session = page.context.new_cdp_session(page)
    errors = session.send("Page.getInstallabilityErrors")["installabilityErrors"]
    return {error["errorId"] for error in errors}


@pytest.mark.browser
def test_a_phone_over_https_keeps_the_screen_awake_and_may_install_the_app(
    trusting_browser, https_server, tmp_path
):
    """Plain http://companion.lan is no secure context (test_browser_chooser): no Wake
    Lock. Over HTTPS the match page's own keep-awake (static/js/table.js) holds one."""
    base = f"https://{LAN_HOST}:{https_server}"
    app = create_app(conftest.testing_config(tmp_path / "workers.sqlite"))
    _, _, match_id, _ = joined(app, base, 0)
    with app.app_context():
        token = db.session.get(Match, match_id).player_token
    trusting_browser.add_init_script(RECORD_WAKE_LOCKS)
    page = trusting_browser.new_page()
    page.goto(f"{base}/matches/{match_id}/join/{token}")
    assert page.url == f"{base}/matches/{match_id}"  # the join's redirect stays on https
    assert page.evaluate("window.isSecureContext") is True
    page.wait_for_function("window.heldWakeLocks.length === 1")
    assert page.evaluate("window.heldWakeLocks[0].type") == "screen"
    assert page.evaluate("window.heldWakeLocks[0].released") is False
    # The match's event stream opens over TLS too (gevent's worker wraps it).
    expect(page.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
    # A form sent over HTTPS passes the CSRF check, which asks for the Referer there.
    page.get_by_role("button", name="I am Anna").click()
    page.get_by_text("You are Anna on this phone.").wait_for()
    # Its manifest makes an app Chromium would install (no service worker needed).
    assert installability_errors(page) == set()


@pytest.mark.browser
def test_over_plain_http_a_phone_cannot_install_the_app(page, lan_server):
    page.goto(lan_server + "/")
    assert "not-from-secure-origin" in installability_errors(page)


def test_flask_invite_prints_an_https_link_when_the_server_serves_https(app, table):
    """The link printed on the machine itself, for a match whose phones all lost it."""
    _, match_id = table
    app.config["CERT"] = "companion.pem"  # COMPANION_CERT
    result = app.test_cli_runner().invoke(args=["invite", str(match_id)])
    assert result.exit_code == 0, result.output
    assert re.findall(r"\w+://\S+/join/\S+", result.output)[0].startswith("https://")


def test_the_wrong_name_page_over_https_gives_the_https_address(client):
    page = client.get("/", headers={"Host": "evil.example"}, base_url="https://localhost")
    assert page.status_code == 400
    # Each address it answers to is a link, over https as the page was asked.
    links = re.findall(r'<a href="(\w+)://[^"]+">', page.get_data(as_text=True))
    assert links and set(links) == {"https"}


def refusal(monkeypatch, argv: list[str], **env: str) -> str:
    """What the launcher says when it refuses to start, before it binds or migrates."""
    for name in ("COMPANION_CERT", "COMPANION_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        serve.main(["--host", "127.0.0.1", "--port", str(free_port()), *argv])
    return str(stopped.value.code)


def test_a_certificate_the_server_cannot_use_is_one_line(
    monkeypatch, authority, certificate, tmp_path
):
    cert, key = certificate["COMPANION_CERT"], certificate["COMPANION_KEY"]
    missing = str(tmp_path / "missing.pem")
    other = tmp_path / "other-key.pem"
    authority.issue_cert("other.lan").private_key_pem.write_to_path(str(other))
    locked = tmp_path / "locked-key.pem"
    private = serialization.load_pem_private_key(Path(key).read_bytes(), password=None)
    locked.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    cases = {
        (missing, key): f"Cannot read {missing} (COMPANION_CERT): No such file or directory.",
        (cert, str(tmp_path)): f"Cannot read {tmp_path} (COMPANION_KEY): Is a directory.",
        (key, key): f"{key} (COMPANION_CERT) holds no certificate: PEM text is expected.",
        (cert, cert): f"{cert} (COMPANION_KEY) holds no private key.",
        (cert, str(other)): f"The key {other} is not the key of the certificate {cert}.",
        (cert, str(locked)): f"The key {locked} is protected by a passphrase, which nobody "
        "can type while the server starts: write it without one (openssl pkey -in "
        f"{locked} -out plain-key.pem).",
    }
    for (cert_file, key_file), line in cases.items():
        said = refusal(monkeypatch, [], COMPANION_CERT=cert_file, COMPANION_KEY=key_file)
        assert said == line
    said = refusal(monkeypatch, ["--cert", cert])  # no COMPANION_KEY: the key is in the file
    assert said == f"{cert} (COMPANION_CERT, and COMPANION_KEY is not set) holds no private key."
    said = refusal(monkeypatch, [], COMPANION_KEY=key)
    assert said == "COMPANION_KEY is set but COMPANION_CERT is not: set both for HTTPS."


def test_one_worker_serves_https_too(tmp_path, certificate, authority):
    """A small machine's one worker is gunicorn's, as several are: it serves HTTPS."""
    server, port = start_server(tmp_path, workers=1, **certificate)
    try:
        context = ssl.create_default_context()
        authority.configure_trust(context)
        url = f"https://127.0.0.1:{port}/healthz"
        with urllib.request.urlopen(url, timeout=30, context=context) as response:
            assert response.status == 200
    finally:
        stop(server)


def test_a_refused_certificate_stops_the_start_in_one_line(tmp_path):
    """As `make run` shows it: one line, exit status 1, no traceback, no address."""
    missing = tmp_path / "companion.pem"
    result = subprocess.run(
        [*SERVE, "--host", "127.0.0.1", "--port", str(free_port())],
        cwd=ROOT,
        env=server_env(tmp_path, COMPANION_CERT=str(missing), COMPANION_KEY=str(missing)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"Cannot read {missing} (COMPANION_CERT): No such file or directory."
    ]
