#!/usr/bin/env bash
# bench-million: apply, plan and render of a fleet of a million assignments end to end, with
# wall time and peak RSS.
#
# Generates the synthetic fleet (TARGETS deployment targets x CLUSTER_TYPES cluster types;
# default 10,000 x 100 = 1,000,000 assignments) once into .bench/million-<TARGETS>x<TYPES>/,
# then times with /usr/bin/time:
#   - apply, cold, into an empty bare repository;
#   - apply with nothing changed (RUNS times answered from the record of the apply before,
#     RUNS times in full with --no-cache; must say "no change" and not commit);
#   - apply after one cluster type's NODE_COUNT changed (RUNS times; the commit must touch
#     exactly TARGETS platform-config files and fleetform's state);
#   - plan of a one-workload change (RUNS times; the control plane is restored afterwards);
#   - render --out into an empty folder, and the file system's floor for the same tree
#     (tar extracting the rendered tree into another empty folder).
# Not part of make test: at 1,000,000 assignments it needs several minutes and about
# 20 GB of disk (most of it for render --out; SKIP_RENDER=1 leaves that out).
#
#   make bench-million                      # 10,000 x 100
#   TARGETS=1000 make bench-million         # 100,000 assignments
#   BIN=/tmp/old-fleetform scripts/bench-million.sh   # another build, same fleet
set -euo pipefail

TARGETS=${TARGETS:-10000}
CLUSTER_TYPES=${CLUSTER_TYPES:-100}
RUNS=${RUNS:-3}
BIN=${BIN:-bin/fleetform}
DEVBIN=${DEVBIN:-bin/fleetform-dev} # gen-fleet
SKIP_RENDER=${SKIP_RENDER:-0}
ENV_NAME=dev

dir=.bench/million-${TARGETS}x${CLUSTER_TYPES}
fleet=$dir/fleet
repo=$dir/gitops.git
mkdir -p "$dir"
log=$dir/last.log
: >"$log"

timeit() { # timeit LABEL CMD...: runs CMD, prints wall, CPU and peak RSS on one line
	local label=$1
	shift
	local t
	t=$(mktemp)
	if ! /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >>"$log" 2>&1; then
		echo "$label: FAILED (see $log)" >&2
		tail -20 "$log" >&2
		rm -f "$t"
		exit 1
	fi
	read -r wall user sys rss <"$t"
	rm -f "$t"
	printf '%-44s wall %7.2f s  cpu %7.2f s (user %.2f, sys %.2f)  peak RSS %6d MiB\n' \
		"$label" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$((rss / 1024))"
}

echo "bench-million: $TARGETS targets x $CLUSTER_TYPES cluster types = $((TARGETS * CLUSTER_TYPES)) assignments"
echo "binary: $BIN ($("$BIN" version 2>/dev/null | head -1 || true)); $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ ! -e "$fleet/README.md" ]; then
	rm -rf "$fleet"
	"$DEVBIN" gen-fleet --out "$fleet" --targets "$TARGETS" --cluster-types "$CLUSTER_TYPES" >/dev/null
fi
cfg=$(find "$fleet/environments/$ENV_NAME/cluster-types" -name '*-config.yaml' -path '*/cluster-types/*/*/*' | sort | sed -n 1p)
workload=$(find "$fleet/workloads" -name '*.yaml' | sort | sed -n 1p)
ct=$(basename "$(dirname "$cfg")")

# Cold apply into an empty bare repository.
rm -rf "$repo"
git init --quiet --bare "$repo"
apply=("$BIN" apply --control-plane "$fleet" --env "$ENV_NAME" --gitops "$repo")
export FLEETFORM_CACHE_DIR=$dir/cache # the records of the last apply start empty
rm -rf "$FLEETFORM_CACHE_DIR"
modes=(recorded full)
# A build without records has no --no-cache. (The help is read whole first: grep -q quitting
# early would end apply --help with SIGPIPE, and pipefail would take that for "no".)
if ! grep -q -- --no-cache <<<"$("$BIN" apply --help)"; then modes=(full); fi
timeit "apply, cold" "${apply[@]}"
echo "  commit: $(git --git-dir "$repo" rev-parse --short "$ENV_NAME"); pack: $(du -sh "$repo/objects/pack" | cut -f1)"

# Nothing changed: no commit. First answered from the record of the apply before (the
# cache), then in full (--no-cache: load, schedule, keys).
for mode in "${modes[@]}"; do
	flags=()
	if [ "$mode" = full ] && [ "${#modes[@]}" = 2 ]; then flags=(--no-cache); fi
	for i in $(seq "$RUNS"); do
		before=$(git --git-dir "$repo" rev-parse "$ENV_NAME")
		timeit "apply, nothing changed, $mode ($i)" "${apply[@]}" "${flags[@]}"
		grep -q 'no change' "$log" || { echo "no-op apply did not say no change" >&2; exit 1; }
		[ "$before" = "$(git --git-dir "$repo" rev-parse "$ENV_NAME")" ] || { echo "no-op apply committed" >&2; exit 1; }
		: >"$log"
	done
done

# One cluster type's config changed: TARGETS platform-config files and the state (the index,
# the cluster type's shard, keys and workload keys).
orig=$(mktemp)
cp "$cfg" "$orig"
for i in $(seq "$RUNS"); do
	sed -i "s/NODE_COUNT: .*/NODE_COUNT: \"$((40 + i))\"/" "$cfg"
	timeit "apply, one cluster type changed ($i)" "${apply[@]}"
	changed=$(git --git-dir "$repo" diff --name-status "$ENV_NAME^" "$ENV_NAME")
	n=$(echo "$changed" | wc -l)
	other=$(echo "$changed" | grep -v -E "^M	($ct/[^/]+/platform-config.yaml|\.fleetform/index|\.fleetform/(clustertypes|keys|workloads)/$ct)$" || true)
	if [ "$n" -ne $((TARGETS + 4)) ] || [ -n "$other" ]; then
		echo "the commit touched $n paths, expected $((TARGETS + 4)); unexpected: ${other:0:500}" >&2
		exit 1
	fi
	echo "  commit touched $n paths: $TARGETS $ct/*/platform-config.yaml and fleetform's state"
done
cp "$orig" "$cfg"
timeit "apply, back to the generated config" "${apply[@]}"

# plan of a one-workload change (its targets' manifests: one interval), then restored.
cp "$workload" "$orig"
for i in $(seq "$RUNS"); do
	sed -i "0,/path: \"/s|path: \"|path: \"./v$i|" "$workload"
	timeit "plan, one workload changed ($i)" "$BIN" plan --control-plane "$fleet" --env "$ENV_NAME" --gitops "$repo"
	grep -q 'modified' "$log" || { echo "plan showed no change" >&2; tail "$log" >&2; exit 1; }
	cp "$orig" "$workload"
done
rm -f "$orig"

if [ "$SKIP_RENDER" = 1 ]; then
	exit 0
fi
# render --out into an empty folder, then the file system's floor: the same tree extracted
# by tar into another empty folder. Earlier trees are moved aside and deleted after the
# timings (deleting millions of files right before makes the kernel side slower).
rm -rf "$dir/old" && mkdir -p "$dir/old"
for d in out floor out.tar; do if [ -e "$dir/$d" ]; then mv "$dir/$d" "$dir/old/"; fi; done
sync
timeit "render --out, empty folder" "$BIN" render --control-plane "$fleet" --env "$ENV_NAME" --out "$dir/out"
echo "  files: $(find "$dir/out" -type f | wc -l)"
tar -C "$dir/out" -cf "$dir/out.tar" .
mkdir -p "$dir/floor"
sync
timeit "file-system floor (tar -x of the same tree)" tar -C "$dir/floor" -xf "$dir/out.tar"
rm -rf "$dir/old" "$dir/out.tar"
