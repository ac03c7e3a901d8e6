#!/usr/bin/env bash
# The end-to-end demo (make demo), on `fleetform serve`: the example control plane in git, an
# empty GitOps repository, and serve on SQLite applying it; a simulated fleet reports back; a
# change to the common content reaches dev, and serve promotes it along dev -> stage -> prod by
# itself: into stage only once every dev cluster reports it Ready (refused, with the reason,
# while some fail), into prod once stage's do; then the
# application team's flow (scripts/demo-app.sh); teams: an AccessPolicy, a payments team
# member signed in through an OpenID Connect provider (fleetform-dev oidc-provider) who may
# onboard and promote the team's application (app promote with their OIDC token) but not
# touch the platform or another team's;
# and the web UI's address (single sign-on). The simulated fleet is fleetform-dev sim and
# the identity provider fleetform-dev oidc-provider (make build-dev).
# Everything lives in $DEMO_DIR (default .demo); nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

FF=${FLEETFORM:-$PWD/bin/fleetform}
FFDEV=${FLEETFORM_DEV:-$PWD/bin/fleetform-dev} # its simulated clusters
DIR=${DEMO_DIR:-$PWD/.demo}
PORT=${DEMO_PORT:-0} # 0: any free port
PER_TYPE=${DEMO_CLUSTERS_PER_TYPE:-25}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ fleetform %s\n' "$*"; "$FF" "$@"; }
sim() { printf '$ fleetform-dev sim %s\n' "$*"; "$FFDEV" sim "$@"; }
# wait_for waits (at most 60 s) until the command succeeds: serve works on its own.
wait_for() {
	for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "gave up waiting for: $*"; cat "$DIR/serve.log"; exit 1
}
synced() { "$FF" sync --hub "$HUB" --env "$1" -o json | grep -q "$2"; }

rm -rf "$DIR" && mkdir -p "$DIR"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@localhost GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@localhost

step "A control plane in git (the example, with a stage between dev and prod; each takes promotions automatically), an empty GitOps repository"
cp -r examples/platform "$DIR/work"
# stage: prod's cluster types, policies and config under stage's name, promoted from dev; prod
# is promoted from stage.
cp -r "$DIR/work/environments/prod" "$DIR/work/environments/stage"
mv "$DIR/work/environments/stage/config/prod.yaml" "$DIR/work/environments/stage/config/stage.yaml"
find "$DIR/work/environments/stage" -name '*.yaml' -exec sed -i 's/\bprod\b/stage/g' {} +
sed -i 's/^    from: dev$/    from: stage/' "$DIR/work/environments/prod/environment.yaml"
for env in stage prod; do
	sed -i 's/^    minCompliantPercent: 100$/    minCompliantPercent: 100\n    automatic: true/' "$DIR/work/environments/$env/environment.yaml"
	grep -q 'automatic: true' "$DIR/work/environments/$env/environment.yaml"
done
grep -q 'from: stage' "$DIR/work/environments/prod/environment.yaml"
git -C "$DIR/work" init -q -b main && git -C "$DIR/work" add -A && git -C "$DIR/work" commit -qm "the example control plane"
git clone -q --bare "$DIR/work" "$DIR/control-plane.git"
git -C "$DIR/work" remote add origin "$DIR/control-plane.git"
git init -q --bare "$DIR/gitops.git"
cp -r examples/apps "$DIR/apps"
# Every workload's prod target (the last of its file) gets a stage twin.
for f in "$DIR"/apps/*/workloads/*.yaml; do
	awk '/^    - name: /{b=""} {b=b $0 "\n"} END{printf "%s", b}' "$f" >"$f.last"
	if grep -q 'environment: prod' "$f.last"; then
		sed -e 's/^    - name: \(.*\)$/    - name: \1-stage/' -e 's/environment: prod/environment: stage/' "$f.last" >>"$f"
	fi
	rm "$f.last"
done
cat >"$DIR/fleetform.yaml" <<YAML
repoMap:
  https://github.com/example-org/payments-workloads: apps/payments
  https://github.com/example-org/factory-workloads: apps/factory
  https://github.com/example-org/platform-gitops: $DIR/gitops.git
YAML
CP=(--control-plane "$DIR/control-plane.git" --config "$DIR/fleetform.yaml")
echo "control plane: $DIR/control-plane.git   GitOps: $DIR/gitops.git"

step "stage and prod start at the first release (pinned by hand); dev follows the tip"
run promote "${CP[@]}" --to stage --override --reason "the first release" --actor demo
run promote "${CP[@]}" --to prod --override --reason "the first release" --actor demo

step "The company's identity provider (fleetform-dev oidc-provider): Pat of the payments team, Sam of the platform team"
OIDC_SECRET=demo-oidc-secret
"$FFDEV" oidc-provider serve --client-id fleetform --client-secret "$OIDC_SECRET" \
	--person 'pat@contoso.com=Pat:payments-devs' --person 'sam@contoso.com=Sam:platform-engineers' >"$DIR/oidc.log" 2>&1 &
OIDC_PID=$!
wait_for grep -q '^issuer ' "$DIR/oidc.log"
ISSUER=$(sed -n 's/^issuer \([^ ]*\) .*/\1/p' "$DIR/oidc.log")
echo "identity provider: $ISSUER"
# id_token prints who's ID token, got from the provider without a browser (as a CI job gets its own).
id_token() { "$FFDEV" oidc-provider token --issuer "$ISSUER" --client-id fleetform --client-secret "$OIDC_SECRET" --login "$1"; }

step "fleetform serve on SQLite: the hub's API and the web UI (single sign-on), polling every second"
export FLEETFORM_HUB_ADMIN_TOKEN=demo-admin-token FLEETFORM_HUB_TOKEN=demo-admin-token
FLEETFORM_OIDC_CLIENT_SECRET=$OIDC_SECRET FLEETFORM_SESSION_SECRET=demo-session-secret \
	"$FF" serve "${CP[@]}" --addr "127.0.0.1:$PORT" --data-dir "$DIR/serve" --interval 1s \
	--oidc-issuer "$ISSUER" --oidc-client-id fleetform >"$DIR/serve.log" 2>&1 &
SERVE_PID=$!
# DEMO_KEEP_SERVING=1 (make demo) leaves serve and the provider running after a successful
# demo, for the UI.
stop_serve() {
	kill $SERVE_PID $OIDC_PID 2>/dev/null || true
	wait $SERVE_PID $OIDC_PID 2>/dev/null || true
}
trap stop_serve EXIT
wait_for grep -q serving "$DIR/serve.log"
HUB=$(sed -n 's/.*serving \(http:[^ ]*\).*/\1/p' "$DIR/serve.log")
echo "serve: $HUB (admin token: demo-admin-token)"
wait_for "$FF" sync --hub "$HUB" --env prod
wait_for "$FF" sync --hub "$HUB" --env stage
run sync --hub "$HUB" --env dev
run sync --hub "$HUB" --env stage
run sync --hub "$HUB" --env prod
run sources --hub "$HUB"

step "A simulated fleet ($PER_TYPE clusters per cluster type) reports"
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --once
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env stage --name-prefix sim-stage --clusters-per-type "$PER_TYPE" --once
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env prod --name-prefix sim-prod --clusters-per-type "$PER_TYPE" --once

step "A change to the common content, pushed: serve applies it to dev (stage and prod are pinned)"
git -C "$DIR/work" pull -q --rebase origin main # the pin commits of stage and prod
sed -i 's/^  OTEL_EXPORTER_OTLP_PROTOCOL: grpc$/  OTEL_EXPORTER_OTLP_PROTOCOL: http\/protobuf/' "$DIR/work/config/org-defaults.yaml"
grep -q 'http/protobuf' "$DIR/work/config/org-defaults.yaml"
git -C "$DIR/work" commit -qam "org defaults: OTLP over HTTP" && git -C "$DIR/work" push -q origin main
NEW=$(git -C "$DIR/work" rev-parse HEAD)
wait_for synced dev "\"controlPlaneCommit\": \"$NEW\""
run sync --hub "$HUB" --env dev

step "dev reports the new revision with 10% of its targets failing: serve does not promote stage"
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --fail-rate 0.1 --once
run status --hub "$HUB" --env dev
wait_for sh -c "'$FF' history --hub '$HUB' --env stage --kind promotion | grep -q 'refused: dev: [1-9][0-9]* of'"
run history --hub "$HUB" --env stage --kind promotion

step "dev is fixed, every cluster reports Ready: serve promotes stage by itself and applies it"
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --once
wait_for synced stage '"trigger": "promotion"'
run sync --hub "$HUB" --env stage

step "stage reports the new revision Ready: serve promotes prod by itself and applies it"
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env stage --name-prefix sim-stage --clusters-per-type "$PER_TYPE" --once
wait_for synced prod '"trigger": "promotion"'
run sync --hub "$HUB" --env prod
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env prod --name-prefix sim-prod --clusters-per-type "$PER_TYPE" --once
run status --hub "$HUB" --env prod

step "The promotions and the refusal, from the hub's history"
run history --hub "$HUB" --kind promotion

step "The application team's flow: hello-world's values per deployment target, rendered with its chart (scripts/demo-app.sh)"
DEMO_DIR="$DIR/app" FLEETFORM="$FF" scripts/demo-app.sh

step "Teams: the platform team reviews and merges an AccessPolicy into the control plane"
git -C "$DIR/work" pull -q --rebase origin main
mkdir -p "$DIR/work/access"
cat >"$DIR/work/access/teams.yaml" <<'YAML'
apiVersion: fleetform.io/v1alpha1
kind: AccessPolicy
metadata:
  name: teams
spec:
  roles:
    - name: payments
      subjects: [{group: payments-devs}]
      allow:
        - {action: author, workspaces: [payments-team]}
        - {action: promote, workspaces: [payments-team], environments: [dev, prod]}
        - {action: approve, environments: [dev]}
    - name: platform
      subjects: [{group: platform-engineers}]
      allow:
        - {action: author, platform: true}
        - {action: promote, environments: ["*"]}
        - {action: approve, environments: ["*"]}
        - {action: override, environments: ["*"]}
YAML
cat "$DIR/work/access/teams.yaml"
git -C "$DIR/work" add access && git -C "$DIR/work" commit -qm "access: the payments and platform teams" && git -C "$DIR/work" push -q origin main
PAT=$(id_token pat@contoso.com)
wait_for sh -c "FLEETFORM_HUB_TOKEN='$PAT' '$FF' hub whoami --hub '$HUB' | grep -q 'roles: *payments'"

step "Pat signs in through the identity provider: who the hub takes Pat for"
FLEETFORM_HUB_TOKEN=$PAT run hub whoami --hub "$HUB"

step "Pat onboards the payments team's new workload through serve: allowed, committed with Pat's name"
FLEETFORM_HUB_TOKEN=$PAT run add workload fraud-check --workspace payments-team --hub "$HUB"
git -C "$DIR/control-plane.git" log -1 --format='commit %h by %an <%ae>, committed by %cn%n%b' main

step "Pat may approve in dev, where the policy is in force (prod follows once it is promoted there)"
FLEETFORM_HUB_TOKEN=$PAT run approve --hub "$HUB" --env dev --commit "$(git -C "$DIR/control-plane.git" rev-parse main)" --by pat

step "Pat onboards the team's application (hello-world) on the platform; the platform team promotes it through stage into prod"
FLEETFORM_HUB_TOKEN=$PAT run add workload hello-world --workspace payments-team --hub "$HUB"
git -C "$DIR/work" pull -q --rebase origin main
run promote "${CP[@]}" --to stage --override --reason "the teams' access policy and hello-world" --actor sam@contoso.com
run promote "${CP[@]}" --to prod --override --reason "the teams' access policy and hello-world" --actor sam@contoso.com
wait_for sh -c "FLEETFORM_HUB_TOKEN='$PAT' '$FF' hub whoami --hub '$HUB' --may promote --env prod --workload hello-world"
FLEETFORM_HUB_TOKEN=$PAT run hub whoami --hub "$HUB" --may promote --env prod --workload hello-world

step "Pat deploys hello-world to dev and promotes it into prod with the team's own OIDC token (app promote asks the hub first)"
TEAM="$DIR/team"
mkdir -p "$TEAM"
git clone -q "$DIR/app/source" "$TEAM/source"
sed -i 's/environment: stage/environment: prod/; s/branch: stage/branch: prod/' "$TEAM/source/workload.yaml"
# No cluster of the demo runs hello-world: its promotion gate asks for none compliant.
printf 'chart: helm\npromotion:\n  prod:\n    from: dev\n    minCompliantPercent: 0\n' >"$TEAM/source/fleetform-app.yaml"
git -C "$TEAM/source" commit -qam "hello-world: dev and prod"
git clone -q "$DIR/app/config" "$TEAM/config"
git -C "$TEAM/config" branch -q prod origin/stage
git -C "$TEAM/config" checkout -q dev
git init -q --bare "$TEAM/gitops.git"
TEAMAPP=(--source "$TEAM/source" --config-repo "$TEAM/config" --var IMAGE_NAME=ghcr.io/example/hello-world --gitops "$TEAM/gitops.git")
run app apply "${TEAMAPP[@]}" --env dev --version 1.4.2 --image-tag 1.4.2
FLEETFORM_HUB_TOKEN=$PAT run app promote "${TEAMAPP[@]}" --from dev --to prod --hub "$HUB"
git --git-dir "$TEAM/gitops.git" ls-tree -r --name-only prod | sed 's/^/  gitops@prod: /'

# refused runs, as Pat, a command that the access policies must refuse, and shows why.
refused() {
	printf '$ fleetform %s\n' "$*"
	if FLEETFORM_HUB_TOKEN=$PAT "$FF" "$@"; then echo "allowed, want refused"; exit 1; fi
}
step "Pat may not touch the platform or another team's workload, approve prod, or promote the factory team's app: refused with the reason, nothing written"
BEFORE=$(git -C "$DIR/control-plane.git" rev-parse main)
refused add cluster-type gpu --env dev --hub "$HUB"
refused add workload robot-arm --workspace factory-team --hub "$HUB"
refused approve --hub "$HUB" --env prod --commit "$BEFORE" --by pat
refused hub whoami --hub "$HUB" --may promote --env prod --workload plc-gateway
[ "$(git -C "$DIR/control-plane.git" rev-parse main)" = "$BEFORE" ] || { echo "a refused change was written"; exit 1; }

step "Who did what: the hub's audit history"
run history --hub "$HUB" --kind authoring,approval,promotion,signin --actor pat@contoso.com --limit 10

step "The fleet reports the revisions it now runs"
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env dev --clusters-per-type "$PER_TYPE" --once
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env stage --name-prefix sim-stage --clusters-per-type "$PER_TYPE" --once
sim --hub "$HUB" --gitops "$DIR/gitops.git" --env prod --name-prefix sim-prod --clusters-per-type "$PER_TYPE" --once

step "The web UI, on serve's port, with a read-only token"
run status --hub "$HUB"
VIEWER=$("$FF" hub token create demo-viewer --hub "$HUB" --kind read)
(umask 077 && printf 'UI_URL=%s/\nUI_TOKEN=%s\n' "$HUB" "$VIEWER" >"$DIR/ui.env")
if command -v curl >/dev/null; then
	curl -fsS -o /dev/null -H "Authorization: Bearer $VIEWER" "$HUB/" || { echo "the UI does not answer"; exit 1; }
fi
echo
echo "Demo done: everything is in $DIR."
echo "The UI: $HUB/  (single sign-on as Pat or Sam, who the provider signs in without a password; or the read-only token $VIEWER, or the admin token demo-admin-token)"
if [ "${DEMO_KEEP_SERVING:-0}" = 1 ]; then
	trap - EXIT
	echo "serve and the identity provider keep running (log $DIR/serve.log); stop them with: kill $SERVE_PID $OIDC_PID"
else
	echo "To explore, start serve again:"
	echo "  FLEETFORM_HUB_ADMIN_TOKEN=demo-admin-token $FF serve ${CP[*]} --addr ${HUB#http://} --data-dir $DIR/serve &"
fi
echo "  FLEETFORM_HUB_TOKEN=demo-admin-token $FF diff --hub $HUB stage prod"
