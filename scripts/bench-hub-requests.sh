#!/usr/bin/env bash
# The hub's per-request ingest: `hub serve` on SQLite (STORE=sqlite, the default) or PostgreSQL
# (STORE=postgres: database fleetform_bench, dropped and created again), 10,000 registered
# clusters (CLUSTERS), and wrk (2 threads, 64 connections) posting one report per request,
# each with its cluster's own token: a first round (every cluster's first report, a state
# change), then heartbeats for DURATION (20s), then state changes for DURATION (every report
# flips a deployment's status). Prints wrk's figures per phase and the hub's CPU seconds.
# HUB_FLAGS adds flags to hub serve; PHASES="heartbeats" (or "state-changes") runs one phase
# after the first round; CPUPROFILE=FILE writes the hub's CPU profile there. Output in
# .bench/hubreq.
set -euo pipefail
cd "$(dirname "$0")/.."
FF=${FF:-$PWD/bin/fleetform}
FFDEV=${FFDEV:-$PWD/bin/fleetform-dev}
DIR=$PWD/.bench/hubreq
CLUSTERS=${CLUSTERS:-10000}
DURATION=${DURATION:-20s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
read -r -a hub_flags <<<"${HUB_FLAGS:-}"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 2; }
rm -rf "$DIR" && mkdir -p "$DIR"
# shellcheck source=scripts/hub-bench-lib.sh
. scripts/hub-bench-lib.sh
start_hub "$DIR" "${hub_flags[@]}"

"$FFDEV" loadtest --hub "$HUB" --clusters "$CLUSTERS" --wrk "$DIR/reports.lua" --log-level warn
export THREADS
phase() { # name mode duration
	local before
	before=$(hub_cpu)
	echo "== $1"
	MODE=$2 /usr/bin/time -f "wrk CPU: %U user + %S sys s" wrk -t "$THREADS" -c "$CONNECTIONS" -d "$3" --latency -s "$DIR/reports.lua" "$HUB" | tee "$DIR/$1.txt"
	echo "hub CPU: $(awk -v a="$(hub_cpu)" -v b="$before" 'BEGIN {printf "%.1f", a - b}') s"
	curl -s "$HUB/metrics" | grep -E '^fleetform_hub_ingest_(batch_reports|commit_seconds)_(sum|count)' >"$DIR/$1.metrics" || true
}
# The first round: 3 s is more than 10,000 first reports take; its figures are not the bar's.
phase first-round heartbeat 3s
for p in ${PHASES:-heartbeats state-changes}; do
	case $p in
	heartbeats) phase heartbeats heartbeat "$DURATION" ;;
	state-changes) phase state-changes change "$DURATION" ;;
	*) echo "PHASES: heartbeats, state-changes" >&2 && exit 2 ;;
	esac
done
