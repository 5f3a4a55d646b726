// Package adbctest holds what the adbc packages' tests share: finding
// Arrow's ADBC build (../shared/adbc: the SQLite and PostgreSQL drivers,
// Arrow's C driver manager, adbc.h), the PostgreSQL server the tests
// share and DuckDB's library (PostgresURI, DuckDB), and a PostgreSQL
// server of a test's own for the fault tests to kill, stop and restart
// (PGServer, Linux), and what the fault and load tests check with
// (QueryInt, NothingHeldAfter). Only tests import it.
package adbctest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// Shared returns the path of file in Arrow's ADBC build: ../shared/adbc
// beside the repository, or $ADBC_SHARED. The test skips where it cannot
// be used (its libraries are built for linux/amd64), and says it needs it
// where it is absent (a failure under CI).
func Shared(t testing.TB, file string) string {
	t.Helper()
	if strings.HasSuffix(file, ".so") && (runtime.GOOS != "linux" || runtime.GOARCH != "amd64") {
		t.Skipf("%s is built for linux/amd64 (this is %s/%s)", file, runtime.GOOS, runtime.GOARCH)
	}
	dir := os.Getenv("ADBC_SHARED")
	if dir == "" {
		root, err := ctest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		// ../shared beside the repository, or beside a worktree of it one
		// level down.
		for _, up := range []string{"..", filepath.Join("..", "..")} {
			if d := filepath.Join(root, up, "shared", "adbc"); exists(d) {
				dir = d
				break
			}
		}
	}
	p := filepath.Join(dir, file)
	_, err := os.Stat(p)
	testsupport.Need(t, "Arrow's ADBC build in ../shared/adbc ("+file+")", err)
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
