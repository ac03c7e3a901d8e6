#!/usr/bin/env bash
# An idle fleetform serve watching a control plane with N workload registrations, each a git
# repository of its own (local bare repositories), polled every INTERVAL: its CPU time over
# MEASURE seconds once the first sync is done, and its peak RSS.
#   scripts/bench-serve-idle.sh [N=100] [INTERVAL=1m] [MEASURE=300]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100} INTERVAL=${2:-1m} MEASURE=${3:-300}
FF=${FLEETFORM:-$PWD/bin/fleetform}
DIR=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$DIR"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@localhost GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@localhost

mkdir -p "$DIR/cp/environments/dev" "$DIR/cp/registrations"
cat >"$DIR/cp/environments/dev/env.yaml" <<YAML
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: dev}
spec: {controlPlane: {repo: https://example.com/cp, branch: main, path: .}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: large}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec: {deploymentTargetSelector: {labelSelector: {}}, clusterTypeSelector: {labelSelector: {}}}
YAML
for i in $(seq -w 1 "$N"); do
	cat >"$DIR/cp/registrations/app-$i.yaml" <<YAML
apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata: {name: app-$i}
spec: {workload: {repo: $DIR/apps/app-$i.git, branch: main, path: .}, workspace: team}
YAML
	mkdir -p "$DIR/src/app-$i"
	cat >"$DIR/src/app-$i/workload.yaml" <<YAML
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: app-$i}
spec:
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/app-$i, branch: dev, path: ./web}}
YAML
	git -C "$DIR/src/app-$i" init -q -b main && git -C "$DIR/src/app-$i" add -A && git -C "$DIR/src/app-$i" commit -qm app
	git clone -q --bare "$DIR/src/app-$i" "$DIR/apps/app-$i.git"
done
git -C "$DIR/cp" init -q -b main && git -C "$DIR/cp" add -A && git -C "$DIR/cp" commit -qm cp
git clone -q --bare "$DIR/cp" "$DIR/cp.git"
git init -q --bare "$DIR/gitops.git"

FLEETFORM_HUB_ADMIN_TOKEN=bench "$FF" serve --control-plane "$DIR/cp.git" --gitops "$DIR/gitops.git" \
	--addr 127.0.0.1:0 --data-dir "$DIR/data" --interval "$INTERVAL" >"$DIR/serve.log" 2>&1 &
PID=$!
for _ in $(seq 600); do grep -q 'synced' "$DIR/serve.log" && break; sleep 0.1; done
grep -q 'synced' "$DIR/serve.log" || { cat "$DIR/serve.log"; exit 1; }
sleep 5 # the first sync's sources are polled right after it
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
before=$(cpu)
sleep "$MEASURE"
after=$(cpu)
rss=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
polls=$(grep -c 'source failed' "$DIR/serve.log" || true)
echo "sources: $((N + 1)) (control plane + $N workload repositories), interval $INTERVAL, measured ${MEASURE} s"
awk -v b="$before" -v a="$after" -v t="$ticks" -v m="$MEASURE" -v r="$rss" -v f="$polls" 'BEGIN {
	printf "cpu: %.2f s = %.3f%% of one core; peak RSS %.1f MiB; failed polls %d\n", (a-b)/t, 100*(a-b)/t/m, r/1024, f }'
