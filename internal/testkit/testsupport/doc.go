// Package testsupport holds what the tests of several packages share: the
// leak-checking TestMain (Main, with -cdevice.leaktrace), Arrow's gold files
// and full schema comparison, the C layout table and its struct checks,
// off-heap structs, running a test with and without identity imports, the
// documented error sentinels (Documented, WantDocumented, RunErrorCases),
// and the fuzz harnesses' guarded memory, program reader and read-back
// checks. Only tests import it.
//
// Where a new test goes: a unit test beside the file it tests (a test of
// validate.go in validate_test.go); a test of one technique across the
// package in that technique's file — hostile_test.go (lying C producers and
// consumers), fuzz_test.go, gold_test.go (Arrow's gold files), fault_test.go
// (injected runtime failures), errors_test.go (error paths against the
// documented sentinels), cgo_interop_test.go (arrow-go's cgo cdata, build
// tag cgo); a helper two packages need here. Real C for the other side comes
// from testdata/c through internal/ctest.
package testsupport
