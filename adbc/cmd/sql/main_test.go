package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestMain is the tests', or, with mainEnv set, the command itself run
// by a test in a child process, with mainEnv's JSON list as its arguments.
func TestMain(m *testing.M) {
	if a := os.Getenv(mainEnv); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"sql"}, args...)
		main()
	}
	testsupport.Main(m)
}

// mainEnv holds the arguments of the command run as a child.
const mainEnv = "CDEVICE_SQL_MAIN_ARGS"

func sqliteDriver(t *testing.T) string {
	t.Helper()
	return adbctest.Shared(t, "libadbc_driver_sqlite.so")
}

func runSQL(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

const demo = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 250) " +
	"SELECT x, 'v' || x AS s, CASE WHEN x % 2 = 0 THEN NULL ELSE x * 0.5 END AS h FROM c"

// The result as a table: a header, the first --limit rows, how many more,
// NULLs shown as NULL; the summary on stderr.
func TestTable(t *testing.T) {
	drv := sqliteDriver(t)
	code, out, errOut := runSQL(t, "--driver", drv, "--limit", "3", demo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || strings.Join(strings.Fields(lines[0]), " ") != "x s h" ||
		strings.Join(strings.Fields(lines[2]), " ") != "2 v2 NULL" || lines[4] != "... 247 more rows (--limit 0 prints all)" {
		t.Errorf("table:\n%s", out)
	}
	if !strings.HasPrefix(errOut, "250 rows in ") {
		t.Errorf("stderr %q", errOut)
	}
}

// --out writes Arrow IPC that reads back with every row.
func TestOut(t *testing.T) {
	drv := sqliteDriver(t)
	for _, name := range []string{"r.arrow", "r.arrows"} {
		path := filepath.Join(t.TempDir(), name)
		if code, _, errOut := runSQL(t, "--driver", drv, "--out", path, demo); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows int64
		if name == "r.arrow" {
			r, err := ipc.NewFileReader(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range r.NumRecords() {
				rec, err := r.RecordBatch(i)
				if err != nil {
					t.Fatal(err)
				}
				rows += rec.NumRows()
			}
			r.Close()
		} else {
			r, err := ipc.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				rows += r.RecordBatch().NumRows()
			}
			r.Release()
		}
		f.Close()
		if rows != 250 {
			t.Errorf("%s: %d rows, want 250", name, rows)
		}
	}
}

// Bad usage exits 2 with the usage; a driver that is not there, or a bad
// query, exits 1 naming what failed.
func TestErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"SELECT 1"}, {"--driver", "x"}, {"--bogus", "SELECT 1"}, {"--driver", "x", "-o", "novalue", "SELECT 1"}} {
		if code, _, errOut := runSQL(t, args...); code != 2 || !strings.Contains(errOut, "usage: sql") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
	if code, _, errOut := runSQL(t, "--driver", "x", "--limit", "-5", "SELECT 1"); code != 2 || !strings.Contains(errOut, "--limit -5") {
		t.Errorf("a negative --limit: exit %d, %q", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "libnone.so")
	if code, _, errOut := runSQL(t, "--driver", missing, "SELECT 1"); code != 1 || !strings.Contains(errOut, missing) {
		t.Errorf("missing driver: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runSQL(t, "--driver", sqliteDriver(t), "SELEC 1"); code != 1 || !strings.Contains(errOut, "syntax error") {
		t.Errorf("bad query: exit %d, %q", code, errOut)
	}
}

// --profile names a connection profile: its driver and options (here the
// database file the query reads).
func TestProfile(t *testing.T) {
	drv := sqliteDriver(t)
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "p.db")
	prof := "profile_version = 1\ndriver = " + strconv.Quote(drv) + "\n[Options]\nuri = " + strconv.Quote("file:"+dbFile) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "warehouse.toml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ADBC_PROFILE_PATH", dir)
	if code, _, errOut := runSQL(t, "--profile", "warehouse", "CREATE TABLE t AS SELECT 41 + 1 AS answer"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut := runSQL(t, "--uri", "profile://warehouse", "SELECT answer FROM t")
	if code != 0 || !strings.Contains(out, "42") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(dbFile); err != nil {
		t.Errorf("the profile's database: %v", err)
	}
}

// A password in a connection string never reaches stderr: not in the
// error of a driver that is not there, of a server that does not answer,
// nor where a bad flag's value is echoed.
func TestPasswordNotShown(t *testing.T) {
	const secret = "S3cretPW"
	uri := "postgresql://alice:" + secret + "@127.0.0.1:1/db"
	for _, args := range [][]string{
		{"--uri", uri, "SELECT 1"},
		{"--driver", "pg_x://alice:" + secret + "@h/db", "SELECT 1"},
		{"--driver", adbctest.Shared(t, "libadbc_driver_postgresql.so"), "--uri", uri, "SELECT 1"},
		{"--driver", "x", "-o", "password:" + secret, "SELECT 1"},
	} {
		code, _, errOut := runSQL(t, args...)
		if code == 0 || strings.Contains(errOut, secret) || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// --list-drivers names every place in the search order, with the drivers
// there: a manifest in $ADBC_DRIVER_PATH and one in a folder an option
// adds, before the user's and the system's.
func TestListDrivers(t *testing.T) {
	env, extra := t.TempDir(), t.TempDir()
	for dir, name := range map[string]string{env: "sqlite", extra: "duck"} {
		if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte("manifest_version = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("ADBC_DRIVER_PATH", env)
	code, out, errs := runSQL(t, "--list-drivers", "-o", "additional_manifest_search_path_list="+extra)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || lines[0] != "1. "+env+" ($ADBC_DRIVER_PATH): sqlite" ||
		lines[1] != "2. "+extra+" (additional_manifest_search_path_list): duck" ||
		!strings.Contains(out, "(the user's)") || !strings.Contains(out, "(the system's)") ||
		!strings.Contains(lines[len(lines)-1], "the system's loader") {
		t.Errorf("--list-drivers printed:\n%s", out)
	}
}

// A database's message about the user's SQL reaches stderr as the
// database wrote it, even beside a password given on the command line.
func TestSQLErrorVerbatim(t *testing.T) {
	for _, q := range []string{`SELECT 'abc`, `SELECT @`} {
		code, _, errOut := runSQL(t, "--driver", sqliteDriver(t), "--uri", "file:"+filepath.Join(t.TempDir(), "v.db")+"?password=S3cretPW", q)
		want := `unrecognized token: "` + strings.TrimPrefix(q, "SELECT ") + `"`
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", q, code, errOut, want)
		}
	}
}
