"""Who may do what on the network: the companion's own names only, and no cross-site writes."""

import base64
import hashlib
import re
import socket

import pytest
from conftest import make_app
from driver import add_players, start_game, start_match

from companion import create_app
from companion.db import db
from companion.models import Match, Player
from companion.web.guard import LOOPBACK, own_names
from companion.web.network import lan_address

EVIL = {"Host": "evil.example"}


def players(app) -> list[str]:
    """Every player's name."""
    with app.app_context():
        return list(db.session.scalars(db.select(Player.name)))


# --- host names: DNS rebinding --------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/players/", "/backup", "/rules"])
def test_a_page_for_another_host_name_is_refused(client, path):
    response = client.get(path, headers=EVIL)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "does not answer to the name “evil.example”" in page
    assert "COMPANION_TRUSTED_HOSTS" in page
    assert "Content-Security-Policy" in response.headers


@pytest.mark.parametrize(
    "host", ["", "a b", "localhost:99999", "localhost.evil", "x" * 5000, "ü.example", "a@localhost"]
)
def test_a_malformed_host_is_a_400_too(client, host):
    assert client.get("/", headers={"Host": host}).status_code == 400
    assert client.post("/players/", data={"name": "Eve"}, headers={"Host": host}).status_code == 400


def test_the_refusal_says_which_address_to_open(client):
    page = client.get("/", headers=EVIL).get_data(as_text=True)
    assert f"http://{lan_address()}/" in page


def test_the_backup_is_not_given_to_another_host_name(client, app):
    add_players(client, "Anna")
    response = client.get("/backup/export.json", headers=EVIL)
    assert response.status_code == 400
    assert b"Anna" not in response.data
    assert "COMPANION_TRUSTED_HOSTS" in response.get_json()["error"]  # a .json: in JSON


def test_a_write_for_another_host_name_changes_nothing(client, app):
    (anna,) = add_players(client, "Anna")
    assert client.post("/players/", data={"name": "Ben"}, headers=EVIL).status_code == 400
    rename = client.post(f"/players/{anna}/name", data={"name": "Eve"}, headers=EVIL)
    assert rename.status_code == 400
    assert players(app) == ["Anna"]


def test_the_api_refuses_another_host_name_in_json(client):
    response = client.post("/api/resolve", json={}, headers=EVIL)
    assert response.status_code == 400
    assert "evil.example" in response.get_json()["error"]


def test_the_refusal_speaks_the_phones_language(client):
    response = client.get("/", headers={**EVIL, "Accept-Language": "de"})
    assert response.status_code == 400
    assert "antwortet nicht auf den Namen „evil.example“" in response.get_data(as_text=True)
    assert 'lang="de"' in response.get_data(as_text=True)


def test_a_quiet_poll_for_another_host_name_is_refused_too(client, app):
    """A poll, the request every page without a stream repeats, is no way in either."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    with app.app_context():
        version = db.session.get(Match, match_id).version
    poll = f"/matches/{match_id}/live?since={version}"
    assert client.get(poll).status_code == 204
    assert client.get(poll, headers=EVIL).status_code == 400


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1", "127.0.0.1:5000"])
def test_localhost_is_served_on_any_port(client, host):
    assert client.get("/", headers={"Host": host}).status_code == 200


def test_the_lan_address_and_the_host_name_are_served(client):
    machine = socket.gethostname().lower()
    label = machine.partition(".")[0]  # mDNS and the router name the first label
    for host in (f"{lan_address()}:8000", machine, f"{label}.local:8000", f"{label}.lan"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host


@pytest.mark.app_config(PUBLIC_URL="http://nimmt.home:8000")
def test_the_public_url_is_served(client):
    assert client.get("/", headers={"Host": "nimmt.home"}).status_code == 200
    assert client.get("/", headers={"Host": "nimmt.home:8000"}).status_code == 200
    assert client.get("/", headers={"Host": "nimmt.home.evil.example"}).status_code == 400


@pytest.mark.parametrize(
    "setting",
    ["pi.fritz.box, Spiele.lan", '["pi.fritz.box", "spiele.lan"]', "pi.fritz.box,spiele.lan,"],
)
def test_more_names_come_from_the_setting(monkeypatch, tmp_path, setting):
    monkeypatch.setenv("COMPANION_TRUSTED_HOSTS", setting)
    app = make_app(tmp_path / "companion.sqlite")
    client = app.test_client()
    for host in ("pi.fritz.box:8000", "spiele.lan", "localhost"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    assert client.get("/", headers=EVIL).status_code == 400


def test_own_names_without_settings():
    names = own_names({})
    machine = socket.gethostname().lower()
    label = machine.partition(".")[0]
    assert {"localhost", "127.0.0.1", lan_address(), machine, f"{label}.local"} <= set(names)
    assert "evil.example" not in names


def test_a_test_config_may_list_names(tmp_path):
    app = create_app(
        {"SECRET_KEY": "x", "TRUSTED_HOSTS": ["tv.lan"], "SQLALCHEMY_DATABASE_URI": "sqlite://"}
    )
    assert "tv.lan" in app.config["TRUSTED_HOSTS"]
    assert "localhost" in app.config["TRUSTED_HOSTS"]


# --- cross-site writes: Origin and Referer ------------------------------------------------


CROSS_SITE = [
    {"Origin": "http://evil.example"},
    {"Origin": "https://evil.example:8000"},
    {"Origin": "null"},  # a sandboxed frame or a file
    {"Referer": "http://evil.example/attack.html"},
    {"Origin": "http://localhost.evil.example"},
]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_a_write_from_another_site_is_refused_and_changes_nothing(client, app, headers):
    response = client.post("/players/", data={"name": "Eve"}, headers=headers)
    assert response.status_code == 403
    assert "Sent from another site" in response.get_data(as_text=True)
    assert players(app) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://localhost"},
        {"Origin": "http://localhost:8000"},  # ports do not matter
        {"Origin": "http://127.0.0.1:5000", "Referer": "http://evil.example/"},
        {"Referer": "http://localhost/players/"},
        {},  # neither: curl, old browsers (the CSRF token still guards them)
    ],
)
def test_a_write_from_the_companions_own_pages_passes(client, app, headers):
    response = client.post("/players/", data={"name": "Anna"}, headers=headers)
    assert response.status_code == 303
    assert players(app) == ["Anna"]


def test_a_write_on_a_match_from_another_site_is_refused(client, app):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    response = client.post(
        f"/matches/{match_id}/games",
        data={"game": "1", "row1": "1", "row2": "2", "row3": "3", "row4": "4"},
        headers={"Origin": "http://evil.example"},
    )
    assert response.status_code == 403
    assert start_game(client, match_id, [1, 2, 3, 4]).status_code == 303  # own page: fine


def test_reading_from_another_site_is_not_refused(client):
    """A link from elsewhere to the companion is fine: only writes are checked."""
    assert client.get("/rules", headers={"Referer": "http://evil.example/"}).status_code == 200


def test_the_api_refuses_other_sites_in_json(client):
    """The resolver API stores nothing, but one rule for every write is simpler to trust;
    without CORS a page of another site could not read the answer anyway."""
    response = client.post("/api/resolve", json={}, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert response.get_json() == {"error": "Requests from other sites are refused."}


@pytest.mark.app_config(WTF_CSRF_ENABLED=True)
def test_a_cross_site_write_is_refused_before_its_csrf_token_is_checked(client, app):
    """Without a token it would be a 400; the 403 says what happened."""
    response = client.post("/players/", data={"name": "Eve"}, headers={"Origin": "null"})
    assert response.status_code == 403


# --- the refusal page: a page of the app, the name as typed, every address a link -----------


def test_the_refusal_names_the_host_without_its_port(client):
    """The finding: it named “companion.lan:8000”; the port is no part of the name."""
    page = client.get("/", base_url="http://companion.lan:8000").get_data(as_text=True)
    assert "does not answer to the name “companion.lan”" in page
    assert "companion.lan:8000" not in page


def test_the_refusal_links_every_address_the_companion_answers_to(client, app):
    """Each of its names a phone can open is a link, at the port the phone asked on."""
    page = client.get("/", base_url="http://companion.lan:8000").get_data(as_text=True)
    links = re.findall(r'<a [^>]*href="([^"]+)"', page)
    phones = [name for name in app.config["TRUSTED_HOSTS"] if name not in LOOPBACK]
    assert phones and links == [f"http://{name}:8000/" for name in phones]


@pytest.mark.app_config(PUBLIC_URL="https://pi.example/")
def test_the_refusal_links_the_public_address_first(client):
    page = client.get("/", headers=EVIL).get_data(as_text=True)
    assert re.findall(r'<a [^>]*href="([^"]+)"', page)[0] == "https://pi.example/"


def test_the_refusal_is_styled_like_the_app_without_asking_the_refused_name(client):
    """Its style sheets are in the page: one fetched from the refused name would be
    refused too. The CSP allows that one style, by its hash, and nothing else inline."""
    response = client.get("/", headers=EVIL)
    page = response.get_data(as_text=True)
    assert 'rel="stylesheet"' not in page and "url_for" not in page
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert ".site-header" in style and ".error-page" in style
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    policy = response.headers["Content-Security-Policy"]
    assert f"style-src 'self' 'sha256-{digest}'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert 'class="site-header"' in page and 'class="error-page"' in page
    assert ".addresses" in style


def test_other_pages_keep_the_policy_without_inline_styles(client):
    policy = client.get("/").headers["Content-Security-Policy"]
    assert "style-src 'self';" in policy and "sha256" not in policy
