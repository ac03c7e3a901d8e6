# shellcheck shell=bash
# Sourced by the hub benchmarks: start_hub DIR [FLAGS...] starts `hub serve` on the store
# STORE names (sqlite, the default: DIR/hub.db; postgres: database fleetform_bench on PG,
# default postgres://postgres@127.0.0.1:5432, dropped and created again), with the admin token
# bench-admin, and sets HUB (its URL), HUB_PID and DB; the hub is stopped on exit.
# CPUPROFILE=FILE writes the hub's CPU profile there.
STORE=${STORE:-sqlite}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
export FLEETFORM_HUB_ADMIN_TOKEN=bench-admin FLEETFORM_HUB_TOKEN=bench-admin

start_hub() {
	local dir=$1
	shift
	case $STORE in
	sqlite) DB="sqlite:$dir/hub.db" ;;
	postgres)
		psql "$PG/postgres" -qc 'DROP DATABASE IF EXISTS fleetform_bench' -c 'CREATE DATABASE fleetform_bench' -c CHECKPOINT
		DB="$PG/fleetform_bench"
		;;
	*) echo "STORE=sqlite or postgres" >&2 && exit 2 ;;
	esac
	"$FF" ${CPUPROFILE:+--cpuprofile "$CPUPROFILE"} hub serve --addr 127.0.0.1:0 --db "$DB" "$@" >"$dir/hub.log" 2>&1 &
	HUB_PID=$!
	# INT, not KILL: the hub finishes its requests and writes its profile.
	trap 'kill -INT $HUB_PID 2>/dev/null || true; wait $HUB_PID 2>/dev/null || true' EXIT
	for _ in $(seq 300); do grep -q serving "$dir/hub.log" && break; sleep 0.1; done
	HUB=$(sed -n 's/.*serving \(http:[^ ]*\).*/\1/p' "$dir/hub.log")
}

# hub_cpu prints the hub's CPU seconds so far.
hub_cpu() { awk -v tck="$(getconf CLK_TCK)" '{printf "%.1f", ($14+$15)/tck}' "/proc/$HUB_PID/stat"; }
