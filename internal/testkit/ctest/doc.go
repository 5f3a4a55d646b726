// Package ctest builds the C test libraries under testdata/c with gcc at test
// time, for the test binary's architecture (Debian's cross compilers for
// 386, arm and arm64 where installed), caches them by a hash of the
// sources, and loads them through internal/ffi; only tests import it.
package ctest
