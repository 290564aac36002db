#!/usr/bin/env bash
# Lighthouse (mobile: its default form factor and throttling) against a realistic match:
# 10 players, game 5 (bench/pages.py's build()), on a throwaway database.
#
#   bench/lighthouse.sh [PAGE...]   PAGE: round (default), home, scoreboard
#   RUNS=5 bench/lighthouse.sh      runs per page (default 3); the median run counts
#
# htmx normally comes from unpkg, which is out of reach offline. The script serves the
# same pinned file (vendor/, checked by its SRI hash in the page) from a second
# local port, as the CDN would: cross-origin, CORS, gzip, cached; COMPANION_HTMX_URL
# points the page and its CSP at it. HTMX=cdn keeps the CDN URL to see the offline cost.
# Reports (JSON + HTML) land in bench/.lighthouse/reports/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=.venv/bin/python
LIGHTHOUSE=bench/.lighthouse/node_modules/.bin/lighthouse
HTMX_FILE=vendor/node_modules/htmx.org/dist/htmx.min.js
REPORTS=bench/.lighthouse/reports
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
CHROME_FLAGS="--headless=new --no-sandbox --disable-gpu --disable-background-networking \
--disable-component-update --disable-sync --no-first-run"

if [[ ! -x $LIGHTHOUSE ]]; then
  npm install --prefix bench/.lighthouse --no-audit --no-fund lighthouse
fi
if [[ ${HTMX:-local} != cdn && ! -f $HTMX_FILE ]]; then
  version=$("$PYTHON" -c 'from companion.web.htmx import HTMX_VERSION; print(HTMX_VERSION)')
  npm install --prefix vendor --no-audit --no-fund "htmx.org@$version"
fi

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

export COMPANION_DATABASE_URL="sqlite:///$TMP/lighthouse.sqlite"
export COMPANION_SECRET_KEY=lighthouse-bench
echo "Building a 10-player match in game 5..."
# The match id, and the session cookie of the phone that played it: Lighthouse opens
# the pages as that phone (a stranger's phone may see less, e.g. no entry form).
read -r MATCH COOKIE < <("$PYTHON" -m bench.lighthouse_app build) || true
[[ -n ${MATCH:-} ]] || { echo "building the match failed" >&2; exit 1; }
HEADERS="{\"Cookie\": \"session=$COOKIE\"}"

if [[ ${HTMX:-local} != cdn ]]; then
  HTMX_PORT=$(free_port)
  "$PYTHON" -m bench.lighthouse_app htmx "$HTMX_PORT" "$HTMX_FILE" &
  PIDS+=($!)
  export COMPANION_HTMX_URL="http://127.0.0.1:$HTMX_PORT/htmx.min.js"
  echo "htmx: the pinned npm copy at $COMPANION_HTMX_URL (the CDN is offline)"
else
  echo "htmx: the CDN URL; offline it fails to load (a console error, no htmx)"
fi

PORT=$(free_port)
"$PYTHON" -m companion.serve --host 127.0.0.1 --port "$PORT" > "$TMP/serve.log" 2>&1 &
PIDS+=($!)
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 50); do
  curl -fs "$BASE/healthz" > /dev/null && break
  sleep 0.2
done
curl -fs "$BASE/healthz" > /dev/null || { cat "$TMP/serve.log"; exit 1; }

mkdir -p "$REPORTS"
JSONS=()
for page in "${@:-round}"; do
  case $page in
    home) path=/ ;;
    round) path=/matches/$MATCH ;;
    scoreboard) path=/matches/$MATCH/scoreboard ;;
    *) echo "unknown page: $page (round, home, scoreboard)" >&2; exit 2 ;;
  esac
  # A served page is warm (templates compiled) all evening; measure that, not start-up.
  curl -fs -H "Cookie: session=$COOKIE" "$BASE$path" > /dev/null
  for run in $(seq "${RUNS:-3}"); do
    echo "Lighthouse: $BASE$path (run $run)"
    "$LIGHTHOUSE" "$BASE$path" --quiet \
      --only-categories=performance,accessibility,best-practices \
      --chrome-flags="$CHROME_FLAGS" --extra-headers="$HEADERS" \
      --output=json --output=html --output-path="$REPORTS/$page-$run"
    JSONS+=("$REPORTS/$page-$run.report.json")
  done
done

"$PYTHON" -m bench.lighthouse_app report "${JSONS[@]}"
