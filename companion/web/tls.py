"""HTTPS for households that want it: the certificate and key of COMPANION_CERT and
COMPANION_KEY, checked before the server starts, and the scheme links then carry.

Phones give a page served over HTTPS (a secure context) what they refuse plain HTTP on
the home network: the screen's Wake Lock, installing the app, vibration on some browsers.
"""

import ssl

CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
PRIVATE_KEY = b"PRIVATE KEY-----"  # PKCS#8, RSA or EC: "-----BEGIN ... PRIVATE KEY-----"


class Passphrase(Exception):
    """The key asks for a passphrase, which no one is there to type."""


def scheme(config) -> str:
    """``https`` when the server serves TLS itself (the CERT setting), else ``http``."""
    return "https" if config.get("CERT") else "http"


def certificate_problem(cert: str, key: str | None) -> str | None:
    """One line that says why ``cert`` and ``key`` cannot serve HTTPS, or None when they
    can. ``key`` None: the key is in the certificate's file."""
    files = {"COMPANION_CERT": cert, "COMPANION_KEY": key or cert}
    texts = {}
    for setting, path in files.items():
        try:
            with open(path, "rb") as file:
                texts[setting] = file.read()
        except OSError as error:
            return f"Cannot read {path} ({setting}): {error.strerror}."
    if CERTIFICATE not in texts["COMPANION_CERT"]:
        return f"{cert} (COMPANION_CERT) holds no certificate: PEM text is expected."
    if PRIVATE_KEY not in texts["COMPANION_KEY"]:
        where = "COMPANION_KEY" if key else "COMPANION_CERT, and COMPANION_KEY is not set"
        return f"{files['COMPANION_KEY']} ({where}) holds no private key."
    key = files["COMPANION_KEY"]
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            cert, key, password=ask_no_passphrase
        )
    except Passphrase:
        return (
            f"The key {key} is protected by a passphrase, which nobody can type while the "
            f"server starts: write it without one (openssl pkey -in {key} -out plain-key.pem)."
        )
    except ssl.SSLError as error:
        if error.reason == "KEY_VALUES_MISMATCH":
            return f"The key {key} is not the key of the certificate {cert}."
        return f"Cannot use {cert} and {key} for HTTPS: {error.reason or error}."
    return None


def ask_no_passphrase() -> str:
    """OpenSSL's passphrase prompt, answered by refusing: a server cannot ask."""
    raise Passphrase()
