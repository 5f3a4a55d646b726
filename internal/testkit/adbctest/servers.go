package adbctest

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// PostgresURI is the driver URI of the PostgreSQL server the tests share:
// $ADBC_POSTGRESQL_URI (.ci/postgres start runs one and prints it). The
// test says it needs it where it is unset (a failure under CI).
func PostgresURI(t testing.TB) string {
	t.Helper()
	uri := os.Getenv("ADBC_POSTGRESQL_URI")
	var err error
	if uri == "" {
		err = errors.New("ADBC_POSTGRESQL_URI is not set (.ci/postgres start runs a server and prints it)")
	}
	testsupport.Need(t, "a PostgreSQL server", err)
	return uri
}

// DuckDB is DuckDB's library (its ADBC driver, entry point
// duckdb_adbc_init): $DUCKDB_LIB, or where examples/duckdb/ci.sh lib puts
// it (its VERSION, under $DUCKDB_CACHE or $TMPDIR; linux/amd64's).
func DuckDB(t testing.TB) string {
	t.Helper()
	lib := os.Getenv("DUCKDB_LIB")
	if lib == "" && (runtime.GOOS != "linux" || runtime.GOARCH != "amd64") {
		t.Skipf("the cached libduckdb is linux/amd64's (this is %s/%s; set DUCKDB_LIB)", runtime.GOOS, runtime.GOARCH)
	}
	var err error
	if lib == "" {
		lib, err = duckDBCached()
	}
	if err == nil {
		_, err = os.Stat(lib)
	}
	testsupport.Need(t, "libduckdb ($DUCKDB_LIB, or examples/duckdb/ci.sh lib)", err)
	return lib
}

func duckDBCached() (string, error) {
	root, err := ctest.ModuleRoot()
	if err != nil {
		return "", err
	}
	script, err := os.ReadFile(filepath.Join(root, "examples", "duckdb", "ci.sh"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil {
		return "", errors.New("examples/duckdb/ci.sh names no VERSION")
	}
	cache := os.Getenv("DUCKDB_CACHE")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "cdevice-duckdb-"+string(m[1]))
	}
	return filepath.Join(cache, "linux-x64", "package", "libduckdb.so"), nil
}
