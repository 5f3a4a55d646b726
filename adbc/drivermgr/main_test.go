package drivermgr_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/testsupport"
)

// TestMain fails the test binary if anything is still held across the C
// boundary when all tests are done.
func TestMain(m *testing.M) { testsupport.Main(m) }

// sharedADBC is ../shared/adbc beside the repository (Arrow's drivers and C
// driver manager, release 24), or $ADBC_SHARED.
func sharedADBC(t testing.TB, file string) string {
	t.Helper()
	dir := os.Getenv("ADBC_SHARED")
	if dir == "" {
		root, err := ctest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "..", "..", "shared", "adbc")
	}
	p := filepath.Join(dir, file)
	_, err := os.Stat(p)
	testsupport.Need(t, "Arrow's ADBC build in ../shared/adbc ("+file+")", err)
	return p
}
