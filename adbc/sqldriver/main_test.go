package sqldriver_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain fails the test binary if anything is still held across the C
// boundary when all tests are done.
func TestMain(m *testing.M) {
	sql.Register("adbc", sqldriver.Driver{Driver: drivermgr.Driver{}})
	testsupport.Main(m)
}

// sqlitePath is Arrow's SQLite driver (adbctest.Shared).
func sqlitePath(t testing.TB) string {
	t.Helper()
	return adbctest.Shared(t, "libadbc_driver_sqlite.so")
}

// sqliteDSN is the data source name of a new SQLite database file.
func sqliteDSN(t testing.TB) string {
	return "driver=" + sqlitePath(t) + "; uri=file:" + filepath.Join(t.TempDir(), "test.db")
}

// openSQLite opens a new SQLite database through database/sql, in WAL mode
// (readers and a writer of separate connections do not block each other),
// closed when the test ends.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("adbc", sqliteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("DB.Close: %v", err)
		}
	})
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return db
}

// mustExec runs a statement that must succeed.
func mustExec(t testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return r
}
