#!/usr/bin/env bash
# make test-review: `tracer review` in a real headless Chromium (scripts/test_review_browser.py).
# Installs what it needs when missing: Debian's chromium and chromium-driver (apt-get; needs
# root, as on CI) and selenium from PyPI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TRACER="${TRACER:-$ROOT/target/debug/tracer}"
case "$TRACER" in /*) ;; *) TRACER="$ROOT/$TRACER" ;; esac

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "test-review: chromium and chromium-driver are missing; install them (apt-get install chromium chromium-driver) or run as root" >&2
        exit 1
    fi
    echo "test-review: installing chromium and chromium-driver (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
fi
"$PYTHON" -c "import selenium" 2>/dev/null \
    || "$PYTHON" -m pip install --quiet --disable-pip-version-check "selenium>=4.10"
exec "$PYTHON" "$ROOT/scripts/test_review_browser.py" --tracer "$TRACER" "$@"
