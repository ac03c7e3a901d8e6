#!/usr/bin/env bash
# make fuzz-smoke, make fuzz-long: scripts/fuzz.sh FUZZTIME [FUZZMINIMIZETIME] runs every fuzz
# target of the repository (each `func FuzzXxx` of a _test.go file git tracks), one after the
# other, for FUZZTIME each (go test -fuzztime) on top of its seed corpus, minimising a new
# input for at most FUZZMINIMIZETIME (2s). It stops at the first target that fails.
# `scripts/fuzz.sh -l` lists the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} # the Makefile's Go (see there)

# targets prints "package-dir FuzzName" for every fuzz target, sorted.
targets() {
	git ls-files '*_test.go' | xargs grep -H '^func Fuzz[A-Za-z0-9_]*(' |
		sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|\1 \2|' | sort
}

if [ "${1:-}" = -l ]; then
	targets
	exit 0
fi
fuzztime=${1:?usage: scripts/fuzz.sh FUZZTIME [FUZZMINIMIZETIME] | scripts/fuzz.sh -l}
minimize=${2:-2s}
targets | while read -r dir name; do
	echo "== $name (./$dir), $fuzztime"
	"$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "./$dir"
done
