#!/usr/bin/env bash
# CI for examples/flight (its own Go module: gRPC stays out of the library's
# go.mod). Needs go and gcc (the C peers are compiled when the tests run; with
# CI set a missing gcc fails them) and the module proxy; expects the gold
# files at ../shared/testdata/arrow-integration beside the checkout.
# Run from anywhere: examples/flight/ci.sh
set -euo pipefail
cd "$(dirname "$0")"
export CI="${CI:-true}"
section() { printf '\n==== flight: %s ====\n' "$*"; }

section "go.mod is tidy"
go mod tidy -diff
section "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then printf 'not gofmt-clean:\n%s\n' "$unformatted" >&2; exit 1; fi
section "go vet"
go vet ./...
section "staticcheck"
staticcheck=$(command -v staticcheck || echo "$(go env GOPATH)/bin/staticcheck")
if [ -x "$staticcheck" ]; then "$staticcheck" ./...; else go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...; fi
section "build, CGO_ENABLED=0"
CGO_ENABLED=0 go build -o /dev/null ./... # no binary left in the tree
section "tests, CGO_ENABLED=0"
CGO_ENABLED=0 go test -count=1 ./...
section "tests, race detector"
CGO_ENABLED=1 go test -race -count=1 ./...
section "benchmarks compile and run once"
CGO_ENABLED=0 go test -run '^$' -bench . -benchtime 1x ./...
