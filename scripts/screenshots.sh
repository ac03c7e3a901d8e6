#!/usr/bin/env bash
# make screenshots: runs the demo, leaves its serve running, and takes a screenshot of every
# page of the web UI with headless Chromium into docs/ui/ (docs/ui.md shows them).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
DIR=$(mktemp -d)
trap 'if [ -f "$DIR/serve.pid" ]; then kill "$(cat "$DIR/serve.pid")" 2>/dev/null || true; fi; rm -rf "$DIR"' EXIT
DEMO_DIR="$DIR/demo" DEMO_KEEP_SERVING=1 scripts/demo.sh >"$DIR/demo.log" 2>&1 || { cat "$DIR/demo.log"; exit 1; }
sed -n 's/.*serve keeps running (pid \([0-9]*\).*/\1/p' "$DIR/demo.log" >"$DIR/serve.pid"
# shellcheck disable=SC1091
. "$DIR/demo/ui.env"
mkdir -p docs/ui
FLEETFORM_SCREENSHOTS_DIR=$PWD/docs/ui FLEETFORM_UI_URL=$UI_URL FLEETFORM_UI_TOKEN=demo-admin-token \
	go test -count=1 -run '^TestScreenshots$' ./internal/ui/
ls -l docs/ui/*.png
