"""Where phones reach this server: its address on the local network, as a URL and a QR code."""

import socket
import sys
from typing import TextIO

import qrcode

# Any private address works: connect() on a UDP socket sends nothing, it only makes
# the kernel choose the interface (and so the address) that routes towards the LAN.
ROUTE_PROBE = ("10.255.255.255", 1)


ALL_INTERFACES = {"0.0.0.0", "::", ""}


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
