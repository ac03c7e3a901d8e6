#!/usr/bin/env bash
# The application team's demo (docs/apps.md): the hello-world example's three repositories in
# git (source, config in Kalypso's shape: a branch per environment, a folder per deployment
# target, and an empty app GitOps repository), `fleetform app apply` for dev, then the seeds'
# use case 3: performance-test's logging level goes from Debug to Info in the config
# repository, and the next apply commits that target's folder only.
# Everything lives in $DEMO_DIR (default .demo-app); nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

FF=${FLEETFORM:-$PWD/bin/fleetform}
DIR=${DEMO_DIR:-$PWD/.demo-app}
EX=examples/apps/hello-world

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ fleetform %s\n' "$*"; "$FF" "$@"; }

rm -rf "$DIR" && mkdir -p "$DIR"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@localhost GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@localhost

step "Three repositories: source (workload.yaml, the chart), config (branches dev and stage), an empty app GitOps repository"
cp -r "$EX/source" "$DIR/source"
git -C "$DIR/source" init -q -b main && git -C "$DIR/source" add -A && git -C "$DIR/source" commit -qm "hello-world 1.4.2"
git init -q -b main "$DIR/config"
for env in dev stage; do
	git -C "$DIR/config" checkout -q --orphan "$env"
	git -C "$DIR/config" rm -rfq --ignore-unmatch . >/dev/null
	cp -r "$EX/config/$env/." "$DIR/config/"
	git -C "$DIR/config" add -A && git -C "$DIR/config" commit -qm "$env values"
done
git -C "$DIR/config" checkout -q dev
git init -q --bare "$DIR/gitops.git"
git -C "$DIR/config" ls-tree -r --name-only dev | sed 's/^/  config@dev: /'

APP=(--source "$DIR/source" --config-repo "$DIR/config" --var IMAGE_NAME=ghcr.io/example/hello-world)
VERSION=(--version 1.4.2 --image-tag 1.4.2)

step "Onboard: render and commit every dev deployment target (the seeds' use case 1)"
run app apply "${APP[@]}" --env dev --gitops "$DIR/gitops.git" "${VERSION[@]}"
git --git-dir "$DIR/gitops.git" ls-tree -r --name-only dev | sed 's/^/  gitops@dev: /'

step "Where does performance-test's logging level come from?"
run app explain "${APP[@]}" "${VERSION[@]}" --target performance-test logging.level

step "Nothing changed: no commit"
run app apply "${APP[@]}" --env dev --gitops "$DIR/gitops.git" "${VERSION[@]}"

step "Use case 3: performance-test's logging level from Debug to Info, in the config repository"
sed -i 's/level: Debug/level: Info/' "$DIR/config/performance-test/values.yaml"
git -C "$DIR/config" commit -qam "performance-test: logging level Info"
git -C "$DIR/config" show --stat --format='  %s' HEAD | sed 's/^/  /'
before=$(git --git-dir "$DIR/gitops.git" rev-parse dev)
run app plan "${APP[@]}" --env dev --gitops "$DIR/gitops.git" "${VERSION[@]}"
run app apply "${APP[@]}" --env dev --gitops "$DIR/gitops.git" "${VERSION[@]}"

step "Only performance-test's folder changed"
git --git-dir "$DIR/gitops.git" log -1 --format='  commit %h: %s' dev
changed=$(git --git-dir "$DIR/gitops.git" diff --name-only "$before" dev)
echo "$changed" | sed 's/^/  /'
if echo "$changed" | grep -qv '^performance-test/'; then
	echo "a file outside performance-test/ changed"; exit 1
fi
git --git-dir "$DIR/gitops.git" diff "$before" dev -- performance-test/configmap-hello-world-config.yaml | sed 's/^/  /'

echo
echo "demo-app: ok (repositories in $DIR)"
