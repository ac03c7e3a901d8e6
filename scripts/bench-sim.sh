#!/usr/bin/env bash
# make bench-sim: `fleetform-dev sim` driving 100,000 simulated clusters (100 cluster types x
# 1,000) against a hub on SQLite on this machine: wall and CPU time of the simulator, reports/s
# of its rounds (the first round changes every cluster's state; the second only refreshes
# it, as heartbeats do). Trees and the database go to .bench/sim.
set -euo pipefail
cd "$(dirname "$0")/.."
FF=$PWD/bin/fleetform
FFDEV=$PWD/bin/fleetform-dev
DIR=$PWD/.bench/sim
PER_TYPE=${SIM_CLUSTERS_PER_TYPE:-1000}
rm -rf "$DIR" && mkdir -p "$DIR"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

"$FFDEV" gen-fleet --out "$DIR/fleet" --targets 10 --cluster-types 100 >/dev/null
git init -q --bare "$DIR/gitops.git"
export FLEETFORM_HUB_ADMIN_TOKEN=bench-admin FLEETFORM_HUB_TOKEN=bench-admin
"$FF" hub serve --addr 127.0.0.1:0 --db "sqlite:$DIR/hub.db" >"$DIR/hub.log" 2>&1 &
HUB_PID=$!
trap 'kill $HUB_PID 2>/dev/null || true; wait $HUB_PID 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q serving "$DIR/hub.log" && break; sleep 0.1; done
HUB=$(sed -n 's/.*serving \(http:[^ ]*\).*/\1/p' "$DIR/hub.log")
"$FF" apply --control-plane "$DIR/fleet" --env dev --gitops "$DIR/gitops.git" --hub "$HUB" >/dev/null

# hub_stats prints the hub's RSS (now and peak), its CPU seconds so far (user + sys, from /proc) and the
# database's size (main file and WAL).
hub_stats() {
	awk -v tck="$(getconf CLK_TCK)" '{printf "hub process: CPU %.1f s (user %.1f, sys %.1f)", ($14+$15)/tck, $14/tck, $15/tck}' "/proc/$HUB_PID/stat"
	awk '/^VmRSS|^VmHWM/ {printf ", %s %s KiB", $1, $2} END {print ""}' "/proc/$HUB_PID/status"
	du -b "$DIR"/hub.db* | awk '{n += $1} END {print "database: " n " bytes (hub.db and its WAL)"}'
}

for round in "first (state changes)" "second (heartbeats)"; do
	echo "== sim --once, $round"
	/usr/bin/time -f 'sim process: wall %e s, user %U s, sys %S s, max RSS %M KiB' \
		"$FFDEV" sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --once --log-level warn
	hub_stats
done
