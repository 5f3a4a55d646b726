#!/bin/sh
# examples/duckdb/ci.sh: fetch libduckdb from npm and run the DuckDB
# example's tests against it (CGO_ENABLED=0), or run the example itself.
#
#   examples/duckdb/ci.sh            # the tests (go test ./examples/duckdb)
#   examples/duckdb/ci.sh run [ARGS] # go run ./examples/duckdb ARGS
#   examples/duckdb/ci.sh lib [PLATFORM]
#                                    # fetch and print the library's path:
#                                    # linux-x64 (default), or win32-x64
#                                    # (duckdb.dll, for .ci/wine)
#
# Needs: go, npm (network for the first run), gcc (the device test's C
# consumer). The library is cached in $DUCKDB_CACHE (default
# $TMPDIR/cdevice-duckdb-VERSION). Sets DUCKDB_LIB for the tests.
set -eu
VERSION=1.5.6-r.1
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${DUCKDB_CACHE:-${TMPDIR:-/tmp}/cdevice-duckdb-$VERSION}

# fetch PLATFORM: the library of @duckdb/node-bindings-PLATFORM, unpacked
# into the cache; prints its path.
fetch() {
	file=libduckdb.so
	[ "$1" = win32-x64 ] && file=duckdb.dll
	dir=$cache/$1
	if [ ! -f "$dir/package/$file" ]; then
		mkdir -p "$dir"
		(cd "$dir" && npm pack --silent "@duckdb/node-bindings-$1@$VERSION" >/dev/null &&
			tar xzf "duckdb-node-bindings-$1-$VERSION.tgz" "package/$file")
	fi
	echo "$dir/package/$file"
}

if [ "${1:-}" = lib ]; then
	fetch "${2:-linux-x64}"
	exit
fi
lib=$(fetch linux-x64)
export DUCKDB_LIB="$lib"
cd "$root"
if [ "${1:-}" = run ]; then
	shift
	exec env CGO_ENABLED=0 go run ./examples/duckdb "$@"
fi
CGO_ENABLED=0 go test -count=1 "$@" ./examples/duckdb
