#!/usr/bin/env bash
# make vulncheck (part of make lint): govulncheck, pinned in tools/go.mod, on every package,
# against a vulnerability database built on this machine: no access to vuln.go.dev is
# needed. The Go module proxy serves golang.org/x/vulndb, whose data/osv holds the OSV
# reports and whose cmd/gendb turns a git repository of them into the database govulncheck
# reads. The database is built once for VULNDB_VERSION (about a minute) into
# .cache/vulndb-<version>/, and again only when the version changes.
#
# To update the database: set VULNDB_VERSION to the version
# `go list -m golang.org/x/vulndb@latest` prints.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} # the Makefile's Go (see there)
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018

db=$PWD/.cache/vulndb-$VULNDB_VERSION
if [ ! -d "$db" ]; then
	echo "vulncheck: building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION" >&2
	dl=$("$GO" mod download -json "golang.org/x/vulndb@$VULNDB_VERSION")
	src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$dl")
	info=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' <<<"$dl")
	date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info")
	[ -d "$src/data/osv" ] && [ -n "$date" ] || { echo "vulncheck: no data/osv or date in golang.org/x/vulndb@$VULNDB_VERSION" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'chmod -R u+w "$tmp" && rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/repo/data"
	cp -r "$src/data/osv" "$tmp/repo/data/"
	# gendb dates each entry by the commits that touched it: one commit, at the version's
	# time, so that a version always gives the same database.
	(
		cd "$tmp/repo"
		export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date
		git init -q
		git add data
		git -c user.name=vulncheck -c user.email=vulncheck@localhost commit -q -m "golang.org/x/vulndb@$VULNDB_VERSION"
	)
	(cd "$src" && GOFLAGS=-mod=mod "$GO" run ./cmd/gendb -repo "$tmp/repo" -out "$tmp/db")
	mkdir -p .cache
	rm -rf .cache/vulndb-*
	mv -T "$tmp/db" "$db"
fi
"$GO" tool -modfile=tools/go.mod govulncheck -db "file://$db" ./...
