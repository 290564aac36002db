"""Install the companion as a systemd service: `make service`; `make service-remove`.

The unit is companion.service.in beside this file, filled in for this checkout, its
venv's Python and the user who ran `make service` (or who ran sudo for it): the server
never runs as root. The COMPANION_* settings and GUNICORN_CMD_ARGS of that moment go to
/etc/default/<name>, which only root reads (a database URL may hold a password).
Standard library only, so `make service-remove` needs no venv.
"""

import argparse
import getpass
import os
import pwd
import re
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
TEMPLATE = HERE / "companion.service.in"
UNITS = Path("/etc/systemd/system")
DEFAULTS = Path("/etc/default")
ALL_INTERFACES = {"0.0.0.0", "::", ""}
STARTING = 90  # seconds a first start may take on a Raspberry Pi (it migrates first)
WORKERS_LINE = "from companion import serve; print(serve.workers_line(serve.parse_args([])))"


def owner() -> str:
    """Who the server runs as: who ran `make service`, or who ran `sudo make service`."""
    user = os.environ.get("SUDO_USER") if os.geteuid() == 0 else getpass.getuser()
    if not user or user == "root":
        raise SystemExit(
            "The server should not run as root: run `make service` as the user it should "
            "run as (it asks for sudo itself)."
        )
    return user


def settings_file(name: str) -> Path:
    """Where the unit reads its settings from."""
    return DEFAULTS / name


def unit(name: str, user: str, python: str) -> str:
    """The unit file for this checkout, run by ``python`` as ``user``."""
    try:
        pwd.getpwnam(user)
    except KeyError:
        raise SystemExit(f"There is no user {user!r} on this machine.") from None
    fields = {
        "@NAME@": name,
        "@USER@": user,
        "@CHECKOUT@": literal(str(CHECKOUT)),
        "@SETTINGS@": literal(str(settings_file(name))),
        "@PYTHON@": argument(python),
    }
    text = TEMPLATE.read_text()
    for field, value in fields.items():
        text = text.replace(field, value)
    return text


def literal(value: str) -> str:
    """``value`` as systemd reads it back: % starts a specifier, so it is doubled."""
    if "\n" in value:
        raise SystemExit(f"A path with a line break cannot go in a unit: {value!r}")
    return value.replace("%", "%%")


def argument(value: str) -> str:
    """One argument of ExecStart=, quoted (a path may hold spaces); $ would expand."""
    escaped = literal(value).replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$")
    return f'"{escaped}"'


def settings(name: str, environ: dict[str, str]) -> str:
    """The settings file: the COMPANION_* variables and GUNICORN_CMD_ARGS of ``environ``,
    double-quoted as both systemd and a shell read them."""
    lines = [
        "# The companion's settings, written by `make service`. Edit them here, then",
        f"# `sudo systemctl restart {name}`; or run `make service` again with others.",
    ]
    for key in sorted(environ):
        if key.startswith("COMPANION_") or key == "GUNICORN_CMD_ARGS":
            value = environ[key]
            if "\n" in value:
                raise SystemExit(f"{key} holds a line break: a settings file cannot keep it.")
            lines.append(f"{key}={double_quoted(value)}")
    return "\n".join(lines) + "\n"


def double_quoted(value: str) -> str:
    """``value`` in double quotes: \\ " $ ` escaped, the four a backslash escapes there."""
    return '"' + re.sub(r'([\\"$`])', r"\\\1", value) + '"'


def as_root(command: list, check: bool = True) -> None:
    """Run ``command`` as root: with sudo unless we are root already."""
    prefix = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run([*prefix, *map(str, command)], check=check)


def install(name: str, python: str) -> None:
    """Write the unit and its settings, start it at boot, and (re)start it now."""
    user = owner()
    with tempfile.TemporaryDirectory() as folder:
        unit_file, settings_copy = Path(folder, f"{name}.service"), Path(folder, name)
        unit_file.write_text(unit(name, user, python))
        settings_copy.write_text(settings(name, dict(os.environ)))
        as_root(["install", "-m", "644", unit_file, UNITS / f"{name}.service"])
        as_root(["install", "-m", "600", settings_copy, settings_file(name)])
    as_root(["systemctl", "daemon-reload"])
    as_root(["systemctl", "enable", f"{name}.service"])
    as_root(["systemctl", "restart", f"{name}.service"])  # the new code and settings
    host = os.environ.get("COMPANION_HOST", "0.0.0.0")
    scheme = "https" if os.environ.get("COMPANION_CERT") else "http"  # it serves TLS
    url = f"{scheme}://{'127.0.0.1' if host in ALL_INTERFACES else host}"
    url += f":{os.environ.get('COMPANION_PORT', '8000')}/healthz"
    if not serving(url):
        raise SystemExit(
            f"The service {name} does not answer at {url} yet: see `journalctl -u {name} -e`."
        )
    print(
        f"The companion runs as the service {name} (user {user}), {workers_line(python)}; "
        "it starts at boot and "
        f"comes back by itself. Status: `systemctl status {name}`; "
        f"its log and the phones' address: `journalctl -u {name}`."
    )


def workers_line(python: str) -> str:
    """How many workers the server chooses, and why, in the line it logs as it starts
    (``companion.serve.workers_line``), with this environment's settings: the service's."""
    said = subprocess.run(
        [python, "-c", WORKERS_LINE], cwd=CHECKOUT, capture_output=True, text=True, check=True
    )
    return said.stdout.strip()


def serving(url: str) -> bool:
    """True once ``url`` answers 200, within STARTING seconds."""
    deadline = time.monotonic() + STARTING
    # Only whether it answers: the certificate names what phones open, not this address.
    unchecked = ssl.create_default_context()
    unchecked.check_hostname = False
    unchecked.verify_mode = ssl.CERT_NONE
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2, context=unchecked) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass  # not listening yet, or restarting
        time.sleep(1)
    return False


def remove(name: str) -> None:
    """Stop the service and remove its unit and settings; the database stays."""
    as_root(["systemctl", "disable", "--now", f"{name}.service"], check=False)
    as_root(["rm", "-f", UNITS / f"{name}.service", settings_file(name)])
    as_root(["systemctl", "daemon-reload"])
    print(f"The service {name} is stopped and removed; the database stays in instance/.")


def main(argv: list[str] | None = None) -> None:
    """unit / settings / workers print what would be installed (workers: how many the
    server chooses, and why); install and remove do it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["unit", "settings", "workers", "install", "remove"])
    parser.add_argument("--name", default="companion", help="the unit's name (companion)")
    parser.add_argument("--user", help="unit: who the server runs as (default: see above)")
    parser.add_argument("--python", default=os.path.abspath(sys.executable))
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", args.name):
        parser.error("--name: letters, digits, _ . - only")
    if args.action == "unit":
        print(unit(args.name, args.user or owner(), args.python), end="")
    elif args.action == "settings":
        print(settings(args.name, dict(os.environ)), end="")
    elif args.action == "workers":
        print(workers_line(args.python))
    elif args.action == "install":
        install(args.name, args.python)
    else:
        remove(args.name)


if __name__ == "__main__":
    main()
