// Package ctest builds the C test libraries under testdata/c with gcc at test
// time, for the target architecture (-m32 for GOARCH=386), caches them by a
// hash of the sources, and loads them through internal/ffi; only tests
// import it.
package ctest
