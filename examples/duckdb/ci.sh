#!/bin/sh
# examples/duckdb/ci.sh: fetch libduckdb from npm and run the DuckDB
# example's tests against it (CGO_ENABLED=0), or run the example itself.
#
#   examples/duckdb/ci.sh            # the tests (go test ./examples/duckdb)
#   examples/duckdb/ci.sh run [ARGS] # go run ./examples/duckdb ARGS
#
# Needs: go, npm (network for the first run), gcc (the device test's C
# consumer). The library is cached in $DUCKDB_CACHE (default
# $TMPDIR/cdevice-duckdb-VERSION). Sets DUCKDB_LIB for the tests.
set -eu
VERSION=1.5.6-r.1
PKG=@duckdb/node-bindings-linux-x64
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${DUCKDB_CACHE:-${TMPDIR:-/tmp}/cdevice-duckdb-$VERSION}
lib=$cache/package/libduckdb.so
if [ ! -f "$lib" ]; then
	mkdir -p "$cache"
	(cd "$cache" && npm pack --silent "$PKG@$VERSION" >/dev/null && tar xzf duckdb-node-bindings-linux-x64-"$VERSION".tgz package/libduckdb.so)
fi
export DUCKDB_LIB="$lib"
cd "$root"
if [ "${1:-}" = run ]; then
	shift
	exec env CGO_ENABLED=0 go run ./examples/duckdb "$@"
fi
CGO_ENABLED=0 go test -count=1 "$@" ./examples/duckdb
