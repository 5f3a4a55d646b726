package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
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
		if err := selfexec.ApplyMemoryLimit(); err != nil {
			panic(err)
		}
		selfexec.Exit(runMain(args)) // as main, telling its peak memory
	}
	testsupport.Main(m)
}

// mainEnv holds the arguments of the command run as a child.
const mainEnv = "CDEVICE_ADBCSQL_MAIN_ARGS"

func sqliteDriver(t *testing.T) string {
	t.Helper()
	return adbctest.Shared(t, "libadbc_driver_sqlite.so")
}

// sqlite is the arguments of a SQLite database of the test's own.
func sqlite(t *testing.T) []string {
	return []string{"--driver", sqliteDriver(t), "--uri", "file:" + filepath.Join(t.TempDir(), "t.db")}
}

func runSQL(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runIn(t, "", args...)
}

// runIn runs the command with stdin (a script: not a terminal).
func runIn(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(stdin), &o, &e, nil)
	return code, o.String(), e.String()
}

// A script on stdin: statements over several lines, ; inside quotes and
// comments not ending one, a comment alone, meta commands; a failed
// statement stops it with its line and status 1, and --continue goes on.
func TestScript(t *testing.T) {
	db := sqlite(t)
	script := `-- a comment; not a statement
CREATE TABLE t (a INTEGER, b TEXT);
INSERT INTO t VALUES (1, 'x;y'), (2, '/* no */'), (3, NULL); /* a comment; */
SELECT a, b
  FROM t -- the table; with a comment
 WHERE a > 1;
\d t
SELECT nonsense(;
SELECT 42 AS after`
	code, out, errOut := runIn(t, script, db...)
	if code != exitFailed || !strings.Contains(errOut, "stdin, line 8: ") || strings.Contains(out, "after") {
		t.Errorf("exit %d; stdout %q; stderr %q; want status 1 at line 8, nothing after", code, out, errOut)
	}
	for _, want := range []string{"CREATE TABLE\n", "INSERT: 3 rows affected\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	for _, want := range []string{"2 | /* no */", "3 | NULL", "a      | int64", "b      | utf8"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runIn(t, script, append(db, "--continue")...)
	if code != exitFailed || !strings.Contains(out, "42") {
		t.Errorf("--continue: exit %d, stdout %q; want the last statement run and status 1", code, out)
	}
}

// -c's statements all run (SQLite's driver would run only the first of a
// string); an update says the rows it changed, a command its tag; flags
// may follow the SQL; "-" reads standard input.
func TestStatements(t *testing.T) {
	db := sqlite(t)
	code, _, errOut := runSQL(t, append([]string{"-c", "CREATE TABLE b(x); INSERT INTO b VALUES (5), (6), (7); DELETE FROM b WHERE x = 6"}, db...)...)
	if code != 0 || !strings.Contains(errOut, "CREATE TABLE\nINSERT: 3 rows affected\nDELETE: 1 row affected\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runSQL(t, append([]string{"SELECT sum(x) AS s FROM b"}, append(db, "--format", "csv")...)...)
	if code != 0 || out != "s\n12\n" {
		t.Errorf("flags after the SQL: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runIn(t, "SELECT count(*) AS n FROM b;", append(db, "--format", "csv", "-")...)
	if code != 0 || out != "n\n2\n" {
		t.Errorf("- as stdin: exit %d, %q", code, out)
	}
}

// Usage: --help and -h print it and exit 0; a bad flag, a missing
// database or an output format no extension has says so in one line and a
// hint, exit 2.
func TestUsage(t *testing.T) {
	for _, h := range []string{"--help", "-h"} {
		if code, out, _ := runSQL(t, h); code != 0 || !strings.HasPrefix(out, "usage: adbcsql") {
			t.Errorf("%s: exit %d, %q", h, code, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"SELECT 1"}, "no database"},
		{[]string{"--driver", "x", "--limit", "-5"}, "--limit -5"},
		{[]string{"--driver", "x", "--out", "r.xls", "SELECT 1"}, `no format for ".xls" files`},
		{[]string{"--driver", "x", "--format", "yaml", "SELECT 1"}, "--format yaml"},
		{[]string{"--driver", "x", "-o", "novalue"}, "want key=value"},
	} {
		code, out, errOut := runSQL(t, c.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.Contains(lines[0], c.want) || lines[1] != "Try 'adbcsql --help'." {
			t.Errorf("%q: exit %d, stderr %q; want one line saying %q and the hint", c.args, code, errOut, c.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "libnone.so")
	if code, _, errOut := runSQL(t, "--driver", missing, "SELECT 1"); code != exitFailed || !strings.Contains(errOut, missing) {
		t.Errorf("missing driver: exit %d, %q", code, errOut)
	}
}

// A table: aligned, NULL set apart, numbers to the right, the first
// --limit rows and how many more; on a terminal of 40 columns a wide value
// is cut (unless --wide).
func TestTable(t *testing.T) {
	db := sqlite(t)
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 250) " +
		"SELECT x, 'v' || x AS s, CASE WHEN x % 2 = 0 THEN NULL ELSE printf('%040d', x) END AS h FROM c"
	code, out, errOut := runSQL(t, append([]string{"--limit", "3", q}, db...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 6 || lines[0] != "x | s  | h" || lines[3] != "2 | v2 | NULL" ||
		lines[5] != "... 247 more rows (--limit 0 prints all)" || !strings.Contains(errOut, "(250 rows)") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}
	o := &output{limit: 10, width: 40}
	var b bytes.Buffer
	rdr := oneRow(t, "a", "b", strings.Repeat("w", 100))
	s, _ := newTableSink(&b, rdr.Schema(), o)
	s.write(rdr.RecordBatch())
	s.end()
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := len([]rune(l)); n > 40 {
			t.Errorf("a line of %d columns on a terminal of 40: %q", n, l)
		}
	}
	if !strings.Contains(b.String(), "…") {
		t.Errorf("nothing cut: %q", b.String())
	}
	o.wide = true
	b.Reset()
	s, _ = newTableSink(&b, rdr.Schema(), o)
	s.write(rdr.RecordBatch())
	s.end()
	if !strings.Contains(b.String(), strings.Repeat("w", 100)) {
		t.Errorf("--wide cut a value: %q", b.String())
	}
}

// oneRow is a reader, positioned on its batch, of one row of string
// columns: names and values alternating.
func oneRow(t *testing.T, kv ...string) interface {
	Schema() *arrow.Schema
	RecordBatch() arrow.RecordBatch
} {
	t.Helper()
	b := newRows(kv[0], kv[1])
	t.Cleanup(b.release)
	b.add(kv[2], kv[2])
	r := b.reader()
	t.Cleanup(r.Release)
	r.Next()
	return r
}

// Every format: CSV and JSON lines as the database itself renders the
// same rows (sqlite3's -csv and json_object), Arrow IPC and Parquet read
// back with arrow-go; --format wins over --out's extension.
func TestFormatsSQLite(t *testing.T) {
	db := sqlite(t)
	dbFile := strings.TrimPrefix(db[3], "file:")
	setup := "CREATE TABLE f (i INTEGER, s TEXT, d REAL); INSERT INTO f VALUES (1, 'plain', 1.5), (2, 'a,b \"q\"', NULL), (3, NULL, -2.25), (4, 'line\nbreak', 0.5)"
	if code, _, errOut := runSQL(t, append([]string{"-c", setup}, db...)...); code != 0 {
		t.Fatal(errOut)
	}
	q := "SELECT i, s, d FROM f ORDER BY i"
	code, csvOut, errOut := runSQL(t, append([]string{"--format", "csv", q}, db...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	if want := sqlite3CLI(t, dbFile, "-csv", "-header", q); csvOut != want {
		t.Errorf("CSV:\n%s\nsqlite3 -csv:\n%s", csvOut, want)
	}
	code, jsonOut, errOut := runSQL(t, append([]string{"--format", "json", q}, db...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	want := sqlite3CLI(t, dbFile, "-list", "SELECT json_object('i', i, 's', s, 'd', d) FROM f ORDER BY i")
	sameJSONLines(t, jsonOut, want)
	readBack(t, db, q, 4)
}

// sqlite3CLI is what SQLite's own command line prints.
func sqlite3CLI(t *testing.T, dbFile string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("sqlite3")
	testsupport.Need(t, "SQLite's command line (Debian: sqlite3)", err)
	out, err := exec.Command(path, append([]string{dbFile}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

// sameJSONLines compares two outputs of JSON objects, a line each, as
// values.
func sameJSONLines(t *testing.T, got, want string) {
	t.Helper()
	g, w := strings.Split(strings.TrimSpace(got), "\n"), strings.Split(strings.TrimSpace(want), "\n")
	if len(g) != len(w) {
		t.Fatalf("%d JSON lines, the database's %d:\n%s\n%s", len(g), len(w), got, want)
	}
	for i := range g {
		var a, b map[string]any
		if err := json.Unmarshal([]byte(g[i]), &a); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, g[i])
		}
		if err := json.Unmarshal([]byte(w[i]), &b); err != nil {
			t.Fatalf("the database's line %d: %v: %s", i, err, w[i])
		}
		if ga, _ := json.Marshal(a); string(ga) != mustJSON(b) {
			t.Errorf("line %d: %s, the database's %s", i, g[i], w[i])
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// readBack writes q's result as Arrow IPC (file and stream) and Parquet,
// and reads each back with arrow-go: rows rows, the same schema.
func readBack(t *testing.T, db []string, q string, rows int64) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"r.arrow", "r.arrows", "r.parquet", "r.bin"} {
		path := filepath.Join(dir, name)
		args := append([]string{"--out", path, q}, db...)
		if name == "r.bin" {
			args = append(args, "--format", "parquet")
		}
		if code, _, errOut := runSQL(t, args...); code != 0 || !strings.Contains(errOut, "written to "+path) {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var n int64
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(name) {
		case ".arrow":
			r, err := ipc.NewFileReader(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range r.NumRecords() {
				rec, err := r.RecordBatch(i)
				if err != nil {
					t.Fatal(err)
				}
				n += rec.NumRows()
			}
			r.Close()
		case ".arrows":
			r, err := ipc.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				n += r.RecordBatch().NumRows()
			}
			r.Release()
		default:
			pf, err := file.NewParquetReader(f)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := fr.ReadTable(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			n = tbl.NumRows()
			tbl.Release()
			pf.Close()
		}
		f.Close()
		if n != rows {
			t.Errorf("%s: %d rows, want %d", name, n, rows)
		}
	}
}

// Meta commands, in a script and as flags: the tables, a table's columns,
// the driver's names; \o sends results to a file, \timing says how long.
func TestMeta(t *testing.T) {
	db := sqlite(t)
	out := filepath.Join(t.TempDir(), "o.csv")
	script := "\\?\nCREATE TABLE m (id INTEGER, name TEXT);\nINSERT INTO m VALUES (1, 'a');\n\\dt\n\\d m\n\\info\n\\timing on\n\\o " + out + "\nSELECT 7 AS seven;\n\\o\n\\bogus\n"
	code, stdout, errOut := runIn(t, script, append(db, "--continue")...)
	for _, want := range []string{"meta commands", "main    |        | m    | table", "id     | int64", "name   | utf8", "VendorName", "SQLite"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitFailed || !strings.Contains(errOut, "Timing is on.") || !strings.Contains(errOut, "Time: ") || !strings.Contains(errOut, `unknown meta command \bogus`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "seven\n7\n" {
		t.Errorf("\\o file: %q, %v", b, err)
	}
	code, stdout, _ = runSQL(t, append([]string{"--tables", "--describe", "m", "--info"}, db...)...)
	if code != 0 || !strings.Contains(stdout, "| m    | table") || !strings.Contains(stdout, "id     | int64") || !strings.Contains(stdout, "DriverName") {
		t.Errorf("the meta flags: exit %d:\n%s", code, stdout)
	}
}

// Nothing of the progress line reaches a pipe; on a pipe no colour.
func TestNoProgressOnAPipe(t *testing.T) {
	db := sqlite(t)
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 300000) SELECT x, NULL AS n FROM c"
	code, out, errOut := runSQL(t, append([]string{"--format", "csv", q}, db...)...)
	if code != 0 || strings.ContainsAny(errOut, "\r\x1b") || strings.Contains(out, "\x1b") {
		t.Errorf("exit %d; stderr %q", code, errOut)
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

// formatRows are rows whose rendering the databases agree on: integers,
// text with a comma, quotes and a line break, NULLs, binary fractions.
const (
	formatTable  = "CREATE TABLE f (i INTEGER, s VARCHAR(40), d DOUBLE PRECISION)"
	formatInsert = "INSERT INTO f VALUES (1, 'plain', 1.5), (2, 'a,b \"q\"', NULL), (3, NULL, -2.25), (4, 'line\nbreak', 0.5)"
	formatQuery  = "SELECT i, s, d FROM f ORDER BY i"
)

// PostgreSQL: CSV as psql --csv writes it, JSON lines as row_to_json.
func TestFormatsPostgreSQL(t *testing.T) {
	uri := adbctest.PostgresURI(t)
	db := []string{"--driver", adbctest.Shared(t, "libadbc_driver_postgresql.so"), "--uri", uri}
	if code, _, errOut := runSQL(t, append([]string{"-c", "DROP TABLE IF EXISTS f; " + formatTable + "; " + formatInsert}, db...)...); code != 0 {
		t.Fatal(errOut)
	}
	t.Cleanup(func() { runSQL(t, append([]string{"-c", "DROP TABLE f"}, db...)...) })
	psql, err := exec.LookPath("psql")
	testsupport.Need(t, "PostgreSQL's psql (Debian: postgresql-client)", err)
	code, csvOut, errOut := runSQL(t, append([]string{"--format", "csv", formatQuery}, db...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	want, err := exec.Command(psql, "--csv", "-X", "-c", formatQuery, uri).Output()
	if err != nil {
		t.Fatal(err)
	}
	if csvOut != string(want) {
		t.Errorf("CSV:\n%s\npsql --csv:\n%s", csvOut, want)
	}
	code, jsonOut, errOut := runSQL(t, append([]string{"--format", "json", formatQuery}, db...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	want, err = exec.Command(psql, "-X", "-At", "-c", "SELECT row_to_json(t) FROM ("+formatQuery+") t", uri).Output()
	if err != nil {
		t.Fatal(err)
	}
	sameJSONLines(t, jsonOut, string(want))
	readBack(t, db, formatQuery, 4)
	// numeric arrives as an extension type (arrow.opaque): rendered from
	// its storage, in every text format.
	for format, want := range map[string]string{"csv": "n\n2.5\n", "json": `{"n":"2.5"}` + "\n", "table": "n\n---\n2.5\n"} {
		code, out, errOut := runSQL(t, append([]string{"--format", format, "SELECT 2.5::numeric AS n"}, db...)...)
		if code != 0 || out != want {
			t.Errorf("numeric as %s: exit %d, %q (%s); want %q", format, code, out, errOut, want)
		}
	}
}

// DuckDB: CSV and JSON lines as its own COPY ... TO writes them; an update
// whose count the driver does not give says so (never a false 0).
func TestFormatsDuckDB(t *testing.T) {
	dir := t.TempDir()
	db := []string{"--driver", adbctest.DuckDB(t), "--entrypoint", "duckdb_adbc_init", "--uri", filepath.Join(dir, "f.duckdb")}
	if code, _, errOut := runSQL(t, append([]string{"-c", formatTable + "; " + formatInsert}, db...)...); code != 0 {
		t.Fatal(errOut)
	}
	csvFile, jsonFile := filepath.Join(dir, "duck.csv"), filepath.Join(dir, "duck.json")
	copies := "COPY (" + formatQuery + ") TO '" + csvFile + "' (HEADER); COPY (" + formatQuery + ") TO '" + jsonFile + "' (FORMAT JSON)"
	if code, _, errOut := runSQL(t, append([]string{"-c", copies}, db...)...); code != 0 {
		t.Fatal(errOut)
	}
	code, csvOut, errOut := runSQL(t, append([]string{"--format", "csv", formatQuery}, db...)...)
	if want, _ := os.ReadFile(csvFile); code != 0 || csvOut != string(want) {
		t.Errorf("CSV (%s):\n%s\nDuckDB's COPY:\n%s", errOut, csvOut, want)
	}
	code, jsonOut, errOut := runSQL(t, append([]string{"--format", "json", formatQuery}, db...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	want, _ := os.ReadFile(jsonFile)
	sameJSONLines(t, jsonOut, string(want))
	readBack(t, db, formatQuery, 4)
	code, _, errOut = runSQL(t, append([]string{"-c", "DELETE FROM f WHERE i > 100"}, db...)...)
	if code != 0 || !strings.Contains(errOut, "DELETE: rows affected unknown") {
		t.Errorf("an update the driver gives no count for: exit %d, %q", code, errOut)
	}
}

// A million rows written as CSV and as Parquet stream through: the
// command, a child whose address space is bounded, holds a few batches
// (and a Parquet row group), not the result; every row arrives. (The
// figures, peak memory and rows/s: the test's log.)
func TestLargeResultsStream(t *testing.T) {
	db := sqlite(t)
	const rows = 1_000_000
	q := fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d) SELECT x, 'row ' || x AS s, x * 0.5 AS h FROM c", rows)
	for _, name := range []string{"big.csv", "big.parquet"} {
		path := filepath.Join(t.TempDir(), name)
		a, _ := json.Marshal(append([]string{"--out", path, q}, db...))
		cmd := selfexec.Command([]string{mainEnv + "=" + string(a)})
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		// The race detector's shadow memory takes address space, and
		// resident memory, of its own: no bound holds under it.
		bound, race := int64(512<<20), testsupport.RaceEnabled()
		if race {
			bound = 64 << 30
		}
		peak, elapsed, err := selfexec.Bounded(cmd, bound, 5*time.Minute)
		if err != nil {
			t.Fatalf("%s: %v: %s", name, err, stderr.String())
		}
		t.Logf("%s: %d rows in %v (%.0f rows/s), peak RSS %.1f MiB", name, rows, elapsed.Round(time.Millisecond),
			rows/elapsed.Seconds(), float64(peak)/(1<<20))
		if peak > 256<<20 && !race {
			t.Errorf("%s: peak RSS %d bytes: the result was held, not streamed", name, peak)
		}
		if got := countRows(t, path); got != rows {
			t.Errorf("%s: %d rows, want %d", name, got, rows)
		}
	}
}

// countRows counts the rows of a CSV file (its lines but the header) or
// a Parquet file.
func countRows(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if filepath.Ext(path) == ".csv" {
		var n int64
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			n++
		}
		return n - 1
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	return pf.NumRows()
}
