"""Helpers for bench/lighthouse.sh: the match data, a local htmx copy, the score summary.

build            create COMPANION_DATABASE_URL, play 10 players into game 5; print the
                 match id and the session cookie of the phone that played it
htmx PORT FILE   serve FILE at /htmx.min.js the way the CDN does (CORS, gzip, cached)
report JSON...   print each Lighthouse report's scores and the audits that did not pass
"""

from __future__ import annotations

import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CATEGORIES = ("performance", "accessibility", "best-practices")


def build_match() -> tuple[int, str]:
    """Fill the configured database with bench/pages.py's match; return its id and the
    session cookie of the phone that played it (so Lighthouse sees the player's page)."""
    from flask_migrate import stamp

    from bench.pages import build
    from companion import create_app
    from companion.db import db

    app = create_app({"WTF_CSRF_ENABLED": False})
    with app.app_context():
        # The models' schema, stamped as the newest revision: serve's upgrade() leaves it.
        db.create_all()
        stamp()
    client = app.test_client()
    match_id, _ids, _plays = build(client)
    cookie = client.get_cookie("session")
    return match_id, cookie.value if cookie else ""


def serve_htmx(port: int, file: Path) -> None:
    """Serve one file like unpkg: CORS (for the SRI check), gzip, a year of caching."""
    plain = file.read_bytes()
    packed = gzip.compress(plain, 9)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            """The file at /htmx.min.js, 404 elsewhere."""
            if self.path != "/htmx.min.js":
                self.send_error(404)
                return
            zipped = "gzip" in self.headers.get("Accept-Encoding", "")
            body = packed if zipped else plain
            self.send_response(200)
            self.send_header("Content-Type", "application/javascript; charset=utf-8")
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
            if zipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            """Quiet: Lighthouse's own output is what matters."""

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def report(paths: list[str]) -> None:
    """Per page: the median run's scores (every run's in brackets) and its failing audits."""
    runs: dict[str, list[dict]] = {}
    for path in paths:
        result = json.loads(Path(path).read_text())
        runs.setdefault(result["finalDisplayedUrl"], []).append(result)
    for url, results in runs.items():
        # Lighthouse's advice: judge the median run, since one run can be noisy.
        results.sort(key=lambda result: result["categories"]["performance"]["score"] or 0)
        median = results[len(results) // 2]
        print(f"\n{url}  (median of {len(results)} runs)")
        for name in CATEGORIES:
            title = median["categories"][name]["title"]
            each = ", ".join(score(result, name) for result in results)
            print(f"  {title:15s} {score(median, name):>3s}   [{each}]")
        # Lighthouse's CPU benchmark per run: low values mean a busy machine, slower scores.
        cpu = ", ".join(str(round(result["environment"]["benchmarkIndex"])) for result in results)
        print(f"  {'CPU benchmark':15s}       [{cpu}]")
        for name in CATEGORIES:
            for ref in median["categories"][name]["auditRefs"]:
                audit = median["audits"][ref["id"]]
                if audit["score"] is None or audit["score"] >= 1:
                    continue
                if audit["scoreDisplayMode"] == "informative":
                    continue
                shown = f" ({audit['displayValue']})" if audit.get("displayValue") else ""
                weight = f", weight {ref['weight']}" if ref.get("weight") else ""
                print(f"  - [{name}{weight}] {audit['title']}{shown}")
        for warning in median.get("runWarnings", []):
            print(f"  ! {warning}")


def score(result: dict, category: str) -> str:
    """A category's score out of 100, as Lighthouse shows it."""
    value = result["categories"][category]["score"]
    return "n/a" if value is None else str(round(value * 100))


if __name__ == "__main__":
    command, *args = sys.argv[1:] or ["help"]
    if command == "build":
        print(*build_match())
    elif command == "htmx":
        serve_htmx(int(args[0]), Path(args[1]))
    elif command == "report":
        report(args)
    else:
        sys.exit(__doc__)
