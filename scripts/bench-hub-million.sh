#!/usr/bin/env bash
# The hub at 100,000, 300,000 and 1,000,000 clusters: `hub serve` on SQLite (STORE=sqlite, the
# default) or PostgreSQL (STORE=postgres: database fleetform_bench on PG, default
# postgres://postgres@127.0.0.1:5432, dropped and created again), then `fleetform-dev loadtest
# --change-every 0` with SIZES clusters in turn on the same database. Each run registers its
# clusters (those of the run before get new tokens), and every cluster's first report of the
# run is a state change (first round); then they only send heartbeats (steady). After each
# run it prints the hub's CPU seconds and RSS and the database's size. Output in .bench/hub1m.
# HUB_FLAGS adds flags to hub serve (HUB_FLAGS="--token-cache-ttl 15m"); CONCURRENCY sets the
# loadtest's concurrent clients (default 64); BATCH the reports per request (default 1; more:
# POST /api/v1/reports/batch, as `hub relay` forwards them); CHANGE_EVERY the loadtest's
# --change-every (default 0: heartbeats after the first round; 1: every report a state change).
set -euo pipefail
cd "$(dirname "$0")/.."
FF=${FF:-$PWD/bin/fleetform}
FFDEV=${FFDEV:-$PWD/bin/fleetform-dev}
DIR=$PWD/.bench/hub1m
SIZES=${SIZES:-100000 300000 1000000}
CONCURRENCY=${CONCURRENCY:-64}
BATCH=${BATCH:-1}
CHANGE_EVERY=${CHANGE_EVERY:-0}
read -r -a hub_flags <<<"${HUB_FLAGS:-}"
rm -rf "$DIR" && mkdir -p "$DIR"
# shellcheck source=scripts/hub-bench-lib.sh
. scripts/hub-bench-lib.sh
# --stale-after 1h: the first round of a million clusters on two shared cores can take longer
# than the default 10 minutes; clusters going stale meanwhile would turn heartbeats into state changes.
start_hub "$DIR" --stale-after 1h "${hub_flags[@]}"

db_bytes() {
	if [ "$STORE" = sqlite ]; then
		du -cb "$DIR"/hub.db* | tail -1 | cut -f1
	else
		psql "$PG/postgres" -Atc "SELECT pg_database_size('fleetform_bench')"
	fi
}

for n in $SIZES; do
	# A run lasts its first round (about 3,000 first reports/s here) and a minute of heartbeats.
	duration=$((n / 3000 + 60))s
	before=$(hub_cpu)
	echo "== $n clusters, --duration $duration"
	/usr/bin/time -f 'loadtest process: wall %e s, user %U s, sys %S s, max RSS %M KiB' \
		"$FFDEV" loadtest --hub "$HUB" --clusters "$n" --duration "$duration" --concurrency "$CONCURRENCY" \
		--batch "$BATCH" --change-every "$CHANGE_EVERY" -o json --log-level warn | tee "$DIR/loadtest-$n.json" || echo "loadtest exited non-zero"
	echo "hub process: CPU $(awk -v a="$(hub_cpu)" -v b="$before" 'BEGIN {printf "%.1f", a - b}') s during the run;" \
		"$(awk '/^VmRSS|^VmHWM/ {printf "%s %s KiB ", $1, $2}' "/proc/$HUB_PID/status")"
	echo "database: $(db_bytes) bytes"
done
