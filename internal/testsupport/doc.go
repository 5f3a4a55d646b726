// Package testsupport holds what the tests of several packages share: the
// leak-checking TestMain (Main), Arrow's gold files and full schema
// comparison, the C layout table and its struct checks, off-heap structs,
// running a test with and without identity imports, and the fuzz
// harnesses' guarded memory, program reader and read-back checks. Only
// tests import it.
package testsupport
