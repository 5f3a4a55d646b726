// Package ctest builds the C test libraries under testdata/c with gcc at test
// time and loads them through internal/ffi; only tests import it.
package ctest
