"""Serve the companion on the local network: `python -m companion.serve`."""

import argparse
import os
import socket
import sys
from typing import TextIO

import qrcode
import waitress
from flask_migrate import upgrade
from sqlalchemy import select

from companion import create_app
from companion.db import db

# Any private address works: connect() on a UDP socket sends nothing, it only makes
# the kernel choose the interface (and so the address) that routes towards the LAN.
ROUTE_PROBE = ("10.255.255.255", 1)
ALL_INTERFACES = {"0.0.0.0", "::", ""}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read --host and --port, defaulting to COMPANION_HOST / COMPANION_PORT."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("COMPANION_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("COMPANION_PORT", "8000")))
    return parser.parse_args(argv)


def lan_address() -> str:
    """The IPv4 address other devices on this network can reach us at."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(ROUTE_PROBE)
            return probe.getsockname()[0]
        except OSError:
            pass  # no route at all (offline): fall back to the host name
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def phone_url(host: str, port: int) -> str:
    """The URL a phone should open for a server bound to host:port."""
    address = lan_address() if host in ALL_INTERFACES else host
    return f"http://{address}:{port}/"


def print_qr(url: str, out: TextIO | None = None) -> None:
    """Print url as a QR code in the terminal (stdout by default), for phones to scan."""
    code = qrcode.QRCode(border=2)
    code.add_data(url)
    # invert: terminals are usually dark, and scanners want dark modules on light.
    code.print_ascii(out=out or sys.stdout, tty=False, invert=True)


def fill_statistics() -> None:
    """Derive the statistics once for games played before the statistics tables existed."""
    from companion.derived import PlayerMatchStat, rebuild_statistics
    from companion.models import Seat

    has_matches = db.session.scalar(select(Seat.id).limit(1)) is not None
    has_statistics = db.session.scalar(select(PlayerMatchStat.id).limit(1)) is not None
    if has_matches and not has_statistics:
        rebuild_statistics(check=False, echo=lambda line: None)


def main(argv: list[str] | None = None) -> None:
    """Migrate the database, show where to connect, and serve with waitress."""
    args = parse_args(argv)
    app = create_app()
    with app.app_context():
        upgrade()
        fill_statistics()
    url = phone_url(args.host, args.port)
    print(f"Open {url} on a phone on the same network", flush=True)
    print_qr(url)
    sys.stdout.flush()
    # Every phone at every table keeps a connection open while it polls; waitress
    # allows only 100 by default, which a few busy tables would use up. It waits on
    # select(), which cannot watch more than 1024 descriptors: stay well below.
    waitress.serve(app, host=args.host, port=args.port, threads=8, connection_limit=900)


if __name__ == "__main__":
    main()
