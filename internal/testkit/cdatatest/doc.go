// Package cdatatest holds the scenarios of arrow-go's own arrow/cdata test
// suite, rewritten once against an API table so that two implementations of
// arrow-go's cdata API run the same cases: our cgo-free cdata package
// (cdata/cdata_test.go, CGO_ENABLED=0) and arrow-go's cgo package itself
// (cdata/cgo_interop_test.go, build tag cgo). Only tests import it.
//
// It owns the API table (the cdata functions with struct addresses as
// uintptr, and its own mirrors of RecordMessage and AsyncRecordBatchStream),
// Run, which runs every scenario as a subtest, and the Go half of the C peer
// in testdata/c/cdata_compat.c, which builds the schemas, arrays and streams
// that the scenarios import, consumes the streams they export and releases
// from C. Every struct the scenarios pass lives in C memory, so that arrow-go's
// cgo functions may keep pointers to it.
//
// Where arrow-go is documented to panic and ours to return an error or a
// released struct, API.Robust (true for ours) turns on the assertions of the
// non-crashing behaviour; arrow-go runs every other assertion unchanged.
package cdatatest
