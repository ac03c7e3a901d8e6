#!/usr/bin/env bash
# render-expected.sh: renders, with the REAL helm and kustomize, the expected output of every
# case of the real-charts corpus (internal/app/testdata/real/<case>/), which
# internal/app/real_charts_test.go compares fleetform's render with, object by object.
#
# What it does:
#   1. builds helm v3.22.0 and kustomize v5.8.2 from the Go module proxy into a temporary
#      GOBIN (helm with the ldflags helm's release build sets, so that its default
#      Kubernetes version is 1.37); FLEETFORM_TOOLS_BIN=DIR reuses (or fills) DIR instead;
#   2. for every case and every deployment target of its source/workload.yaml, writes
#      expected/<target>.yaml:
#        chart:     helm template <release> <chart> -n <target's namespace> --skip-tests \
#                     --include-crds -f config/values.yaml -f config/<env>/values.yaml \
#                     -f config/<env>/<target>/values.yaml      (the files that exist)
#        kustomize: kustomize build <source>/<kustomize folder>
#      When helm refuses the values, its error text goes to expected/<target>.err instead
#      (wordpress-bad-schema).
#
# It is run by a developer after changing the corpus, not at test time; it is idempotent
# (each case's expected/ is rewritten whole). Helm runs with empty temporary config, cache
# and data folders and reaches no cluster and no network.
#
# Each case's layout (see internal/app/testdata/real/*/SOURCE.md):
#   source/workload.yaml        the Workload; the targets are written one field a line:
#                                 "- name:", "environment:", "namespace:" (this script reads
#                                 them with awk)
#   source/fleetform-app.yaml   optional: chart: / kustomize: / releaseName:
#   source/<chart or base>      the vendored chart or kustomize base (source may be a symlink
#                                 to another case's source)
#   config/<env>/<target>/values.yaml   the target's values (config/ and config/<env>/
#                                 values.yaml apply too)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REAL=$ROOT/internal/app/testdata/real
HELM_VERSION=v3.22.0
KUSTOMIZE_VERSION=v5.8.2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bin=${FLEETFORM_TOOLS_BIN:-$tmp/bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
if [ ! -x "$bin/helm" ] || ! "$bin/helm" version --short | grep -q "^${HELM_VERSION%.0}"; then
  echo "building helm $HELM_VERSION into $bin"
  (cd "$tmp" && GOBIN=$bin GOFLAGS=-mod=mod go install \
    -ldflags "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
fi
if [ ! -x "$bin/kustomize" ] || [ "$("$bin/kustomize" version)" != "$KUSTOMIZE_VERSION" ]; then
  echo "building kustomize $KUSTOMIZE_VERSION into $bin"
  (cd "$tmp" && GOBIN=$bin GOFLAGS=-mod=mod go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION")
fi
helm=$bin/helm
kustomize=$bin/kustomize

# Helm reads nothing of the developer's: no repositories, no plugins, no registry logins.
export HELM_CONFIG_HOME=$tmp/helm/config HELM_CACHE_HOME=$tmp/helm/cache HELM_DATA_HOME=$tmp/helm/data
export HELM_PLUGINS=$tmp/helm/plugins KUBECONFIG=/dev/null

# setting <file> <key>: a top-level scalar of a fleetform-app.yaml ("" when unset)
setting() {
  [ -f "$1" ] || return 0
  sed -n "s/^$2:[[:space:]]*\\([^#]*\\).*/\\1/p" "$1" | sed 's/[[:space:]]*$//; s/^"\(.*\)"$/\1/' | head -1
}

# targets <workload.yaml>: one line per deployment target: name environment namespace
targets() {
  awk '
    /^[[:space:]]*- name:/        { if (n != "") print n, e, ns; n = $3; e = ""; ns = ""; next }
    /^[[:space:]]+environment:/   { e = $2; next }
    /^[[:space:]]+namespace:/     { ns = $2; next }
    END                           { if (n != "") print n, e, ns }
  ' "$1"
}

status=0
for dir in "$REAL"/*/; do
  dir=${dir%/}
  case=$(basename "$dir")
  src=$dir/source
  settings=$src/fleetform-app.yaml
  workload=$src/workload.yaml
  [ -f "$workload" ] || { echo "$case: no source/workload.yaml" >&2; status=1; continue; }
  release=$(setting "$settings" releaseName)
  [ -n "$release" ] || release=$(sed -n 's/^  name:[[:space:]]*//p' "$workload" | head -1)
  kdir=$(setting "$settings" kustomize)
  chart=$(setting "$settings" chart)
  [ -n "$chart" ] || chart=helm

  rm -rf "$dir/expected"
  mkdir -p "$dir/expected"
  while read -r target env ns; do
    out=$dir/expected/$target
    if [ -n "$kdir" ]; then
      "$kustomize" build "$src/$kdir" > "$out.yaml"
      echo "$case/$target: kustomize build $kdir"
      continue
    fi
    [ -n "$ns" ] || { echo "$case/$target: no namespace: in workload.yaml" >&2; status=1; continue; }
    args=()
    for f in "$dir/config/values.yaml" "$dir/config/$env/values.yaml" "$dir/config/$env/$target/values.yaml"; do
      if [ -f "$f" ]; then args+=(-f "$f"); fi
    done
    if "$helm" template "$release" "$src/$chart" -n "$ns" --skip-tests --include-crds "${args[@]}" \
         > "$out.yaml" 2> "$tmp/stderr"; then
      echo "$case/$target: helm template $release -n $ns ($(grep -c '^kind:' "$out.yaml") objects)"
    else
      rm -f "$out.yaml"
      # helm's error, without the absolute paths of this machine
      sed "s|$dir/||g; s|$ROOT/||g" "$tmp/stderr" > "$out.err"
      echo "$case/$target: helm refused the values: expected/$target.err"
    fi
  done < <(targets "$workload")
done
exit $status
