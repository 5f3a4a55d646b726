#!/usr/bin/env bash
# examples/ecosystem/ci.sh: vet and test the ecosystem example (its own
# module) with CGO_ENABLED=0; .ci/run calls it with ADBC_POSTGRESQL_URI and
# DUCKDB_LIB set.
set -euo pipefail
cd "$(dirname "$0")"
go mod tidy -diff
CGO_ENABLED=0 go vet ./...
CGO_ENABLED=0 go test -count=1 -v ./... | grep -E '^(--- |ok|FAIL|PASS|    ecosystem_test.go|[a-z]+ through)'
