#!/usr/bin/env bash
# The end-to-end demo (make demo): the example control plane rendered and applied into a local
# GitOps repository, the hub on SQLite, a simulated fleet, the rollout, and a promotion from
# dev to prod through the gates: refused while dev has failing clusters, accepted once dev is
# fully compliant. Everything lives in $DEMO_DIR (default .demo); nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

FF=${FLEETFORM:-$PWD/bin/fleetform}
DIR=${DEMO_DIR:-$PWD/.demo}
PORT=${DEMO_PORT:-0} # 0: any free port
PER_TYPE=${DEMO_CLUSTERS_PER_TYPE:-25}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ fleetform %s\n' "$*"; "$FF" "$@"; }

rm -rf "$DIR" && mkdir -p "$DIR"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@localhost GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@localhost

step "A control plane in git (the example), an empty GitOps repository"
cp -r examples/platform "$DIR/work" && git -C "$DIR/work" init -q -b main && git -C "$DIR/work" add -A &&
	git -C "$DIR/work" commit -qm "the example control plane"
git clone -q --bare "$DIR/work" "$DIR/control-plane.git"
git init -q --bare "$DIR/gitops.git"
cp -r examples/apps "$DIR/apps"
cat >"$DIR/fleetform.yaml" <<YAML
repoMap:
  https://github.com/example-org/payments-workloads: apps/payments
  https://github.com/example-org/factory-workloads: apps/factory
  https://github.com/example-org/platform-gitops: $DIR/gitops.git
YAML
CP=(--control-plane "$DIR/control-plane.git" --config "$DIR/fleetform.yaml")
echo "control plane: $DIR/control-plane.git   GitOps: $DIR/gitops.git"

step "The hub on SQLite"
export FLEETFORM_HUB_ADMIN_TOKEN=demo-admin-token FLEETFORM_HUB_TOKEN=demo-admin-token
"$FF" hub serve --addr "127.0.0.1:$PORT" --db "sqlite:$DIR/hub.db" >"$DIR/hub.log" 2>&1 &
HUB_PID=$!
trap 'kill $HUB_PID 2>/dev/null || true; wait $HUB_PID 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q serving "$DIR/hub.log" && break; sleep 0.1; done
HUB=$(sed -n 's/.*serving \(http:[^ ]*\).*/\1/p' "$DIR/hub.log")
[ -n "$HUB" ] || { cat "$DIR/hub.log"; exit 1; }
echo "hub: $HUB (admin token: demo-admin-token)"

step "dev: pin the control plane's tip, apply it, post the desired state to the hub"
run promote "${CP[@]}" --to dev --actor demo
run apply "${CP[@]}" --env dev --hub "$HUB"

step "dev: a simulated fleet ($PER_TYPE clusters per cluster type) reports, 10% of targets failing"
run sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --fail-rate 0.1 --once
run status --hub "$HUB" --env dev

step "prod: promotion refused, dev is not fully compliant (exit 3)"
set +e
run promote "${CP[@]}" --to prod --hub "$HUB" --actor demo
code=$?
set -e
[ "$code" -eq 3 ] || { echo "expected the promotion to be refused (exit 3), got $code"; exit 1; }

step "dev: the failures are fixed, every cluster reports Ready"
run sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --once
run status --hub "$HUB" --env dev

step "prod: promoted through the gates, applied, reported"
run promote "${CP[@]}" --to prod --hub "$HUB" --actor demo
run apply "${CP[@]}" --env prod --hub "$HUB"
run sim --hub "$HUB" --gitops "$DIR/gitops.git" --env prod --name-prefix sim-prod --clusters-per-type "$PER_TYPE" --once
run status --hub "$HUB" --env prod

step "The promotions and the refusal, from the hub's history"
run history --hub "$HUB" --env prod --kind promotion
run history --hub "$HUB" --env prod --kind desired
echo
echo "Demo done: everything is in $DIR. To explore, start the hub again and ask it:"
echo "  FLEETFORM_HUB_ADMIN_TOKEN=demo-admin-token $FF hub serve --addr ${HUB#http://} --db sqlite:$DIR/hub.db &"
echo "  FLEETFORM_HUB_TOKEN=demo-admin-token $FF diff --hub $HUB dev prod"
