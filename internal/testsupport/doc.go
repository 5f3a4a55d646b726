// Package testsupport holds what the tests of several packages share: Arrow's
// gold files and full schema comparison, the C layout table and its struct
// checks, off-heap structs, and running a test with and without identity
// imports. Only tests import it.
package testsupport
