"""Where phones reach this server: its address on the local network, as a URL and a QR
code, and the names it has there."""

import ipaddress
import re
import socket
import sys
from pathlib import Path
from typing import TextIO

import qrcode

# Any private address works: connect() on a UDP socket sends nothing, it only makes
# the kernel choose the interface (and so the address) that routes towards the LAN.
ROUTE_PROBE = ("10.255.255.255", 1)


ALL_INTERFACES = {"0.0.0.0", "::", ""}
DEFAULT_PORTS = {"http": "80", "https": "443"}

# The resolver's configuration (resolv.conf(5)): its "search" and "domain" lines name the
# network's own domain, which the router hands out with the address. Absent on Windows.
RESOLV_CONF = Path("/etc/resolv.conf")
# Where home networks put their machines' names: reserved for private use, or a router's
# own; nobody on the internet can make this machine's name under them point elsewhere
# (fritz.box is a public name now, but AVM's).
HOME_DOMAINS = (
    "lan",  # OpenWrt's default, and many routers'
    "home",  # common on routers; ICANN will not delegate it (2018)
    "home.arpa",  # RFC 8375: for home networks
    "local",  # RFC 6762: multicast DNS (Avahi, Bonjour)
    "internal",  # ICANN: reserved for private use (2024)
    "localdomain",  # many Linux installations' and routers' default
    "fritz.box",  # AVM FRITZ!Box
)
# A host name or domain as a Host header may spell it (lower case, no trailing dot).
DOMAIN = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*")
COMMENT = re.compile(r"[#;]")


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


def home_names(resolv_conf: Path | None = None) -> list[str]:
    """This machine's names on the home network, lower case: its host name (and its first
    label, when it is fully qualified), and that label under each of the network's own
    domains (``search_domains``) and each of ``HOME_DOMAINS``. Only its own: "other.lan"
    is another machine's."""
    full = socket.gethostname().strip().rstrip(".").lower()
    if not DOMAIN.fullmatch(full):
        return []  # none, or one no Host header can carry
    machine = full.partition(".")[0]
    domains = [*search_domains(resolv_conf or RESOLV_CONF), *HOME_DOMAINS]
    names = [full, machine, *(f"{machine}.{domain}" for domain in domains)]
    return list(dict.fromkeys(names))


def search_domains(resolv_conf: Path) -> list[str]:
    """The domains the resolver's configuration names on its "search" and "domain" lines
    (none when the file cannot be read; "." and odd words left out)."""
    try:
        text = resolv_conf.read_text(errors="replace")
    except OSError:
        return []
    domains = []
    for line in text.splitlines():
        # A comment's words are no domains, at a line's start or after its values.
        keyword, *values = COMMENT.split(line, maxsplit=1)[0].split() or [""]
        if keyword in {"search", "domain"}:
            domains += [value.rstrip(".").lower() for value in values]
    return [domain for domain in domains if DOMAIN.fullmatch(domain)]


def phone_url(host: str, port: int, scheme: str = "http") -> str:
    """The URL a phone should open for a server bound to host:port (one bound to loopback
    answers this machine alone: its own address then); ``scheme`` https when it serves TLS."""
    return phone_base(scheme, host, port, listening=host) + "/"


def phone_base(
    scheme: str, host: str, port: int | str | None, public: object = None, listening: str = ""
) -> str:
    """Where phones reach this server, without the closing slash: ``public`` (the
    PUBLIC_URL setting) when it is set; else ``scheme://host:port``, with this machine's
    LAN address for a host no other device can use (every interface, loopback, none
    known) and without the port when it is the scheme's own. A server ``listening`` on
    loopback alone (the HOST setting) answers this machine only: its loopback address."""
    if public:
        return str(public).rstrip("/")
    if is_loopback(listening):
        address = listening
    elif host in ALL_INTERFACES or is_loopback(host):
        address = lan_address()
    else:
        address = host
    if ":" in address:  # an IPv6 address
        address = f"[{address}]"
    shown = "" if str(port or "") in {"", DEFAULT_PORTS.get(scheme)} else f":{port}"
    return f"{scheme}://{address}{shown}"


def configured_base(config, scheme: str, host: str, port: int | str | None) -> str:
    """``phone_base`` with what the settings say: PUBLIC_URL, and the HOST it listens on
    (the invite's links, the host-error page, ``flask invite``)."""
    return phone_base(scheme, host, port, config.get("PUBLIC_URL"), listening(config))


def listening(config) -> str:
    """The address the server listens on, as the HOST setting gives it ("": not known)."""
    return str(config.get("HOST") or "")


def loopback_only(config) -> bool:
    """True when the server listens on loopback alone (HOST) and no PUBLIC_URL (a proxy in
    front, say) tells phones another way in: then no other phone can reach it."""
    return is_loopback(listening(config)) and not config.get("PUBLIC_URL")


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses, which no other phone can reach."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def print_qr(url: str, out: TextIO | None = None) -> None:
    """Print url as a QR code in the terminal (stdout by default), for phones to scan."""
    code = qrcode.QRCode(border=2)
    code.add_data(url)
    # invert: terminals are usually dark, and scanners want dark modules on light.
    code.print_ascii(out=out or sys.stdout, tty=False, invert=True)
