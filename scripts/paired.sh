#!/usr/bin/env bash
# paired: times two commands in turn (A B A B ...) after one warm-up run of each, with
# /usr/bin/time, and prints for each the median (min - max) wall time, CPU time and peak
# RSS, then the ratio A/B pair by pair (median, min - max): a ratio holds when the
# machine's speed drifts during the series, which a comparison of two separate series does
# not. Each command is one string, run by sh; its output is thrown away.
#
#   scripts/paired.sh [-n RUNS] 'COMMAND A' 'COMMAND B'
#   scripts/paired.sh -n 7 '.bench/ff-old plan --control-plane F --env dev --gitops R' \
#                          '.bench/ff-new plan --control-plane F --env dev --gitops R'
set -euo pipefail

runs=5
if [ "${1:-}" = -n ]; then
	runs=$2
	shift 2
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 [-n RUNS] 'COMMAND A' 'COMMAND B'" >&2
	exit 2
fi
a=$1 b=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# once CMD FILE: runs CMD, appends "wall cpu peak_kib" to FILE.
once() {
	local t=$out/t
	if ! /usr/bin/time -f '%e %U %S %M' -o "$t" sh -c "$1" >/dev/null 2>&1; then
		echo "failed: $1" >&2
		exit 1
	fi
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$t" >>"$2"
}

once "$a" "$out/warm"
once "$b" "$out/warm"
for _ in $(seq "$runs"); do
	once "$a" "$out/a"
	once "$b" "$out/b"
done

# summary FILE COLUMN: "median (min - max)" of a column.
summary() {
	cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%g (%g - %g)", m, v[1], v[NR] }'
}
for side in a b; do
	cmd=$a
	[ "$side" = b ] && cmd=$b
	printf '%s: %s\n  wall s %s; cpu s %s; peak RSS KiB %s\n' "$side" "$cmd" \
		"$(summary "$out/$side" 1)" "$(summary "$out/$side" 2)" "$(summary "$out/$side" 3)"
done
paste -d' ' "$out/a" "$out/b" | awk '{ printf "%.4f\n", $1 / $4 }' >"$out/ratio"
printf 'A/B wall, pair by pair: %s\n' "$(summary "$out/ratio" 1)"
