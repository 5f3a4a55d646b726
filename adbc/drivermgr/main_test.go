package drivermgr_test

import (
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything is still held across the C
// boundary when all tests are done.
func TestMain(m *testing.M) { testsupport.Main(m) }

// sharedADBC is Arrow's ADBC build's file (adbctest.Shared).
func sharedADBC(t testing.TB, file string) string {
	t.Helper()
	return adbctest.Shared(t, file)
}
