package drivermgr_test

// A full disk, for the embedded databases: the test's child process may
// write files of no more than diskLimit bytes (RLIMIT_FSIZE: past it a
// write fails with EFBIG, as on a full filesystem; the child ignores the
// SIGXFSZ it brings). Each step runs in a child of its own, on the file the
// steps before left (DuckDB gives up on a database after a failed write). What is promised: an ingest, an INSERT and a
// transaction that run out of room fail with an ADBC error; the database
// file is intact afterwards, holding exactly what was committed before.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

const (
	diskChildEnv = "CDEVICE_DRIVERMGR_DISK_FULL" // the child's driver name
	diskStepEnv  = "CDEVICE_DRIVERMGR_DISK_STEP" // the step it runs
	diskPathEnv  = "CDEVICE_DRIVERMGR_DISK_PATH" // its database file
	diskLimit    = 4 << 20                       // bytes a file may grow to
	diskKept     = 1000                          // rows committed before
)

// A diskDB is an embedded database on a file: its options, SQL for the
// integers 1..n as the column i (%d), whether a table exists (%s: its
// name), 64 random characters (that no compression shrinks much), and how
// to check the file afterwards.
type diskDB struct {
	name    string
	options func(t *testing.T, path string) map[string]string
	series  string
	exists  string
	filler  string
	// partialIngest: the driver's ingest in autocommit mode commits batch
	// by batch, so that a failure keeps the batches before it (DuckDB's:
	// docs/adbc.md's reliability section says so).
	partialIngest bool
	// check is the database's own integrity check: nil or why the file is
	// not intact.
	check func(c adbc.Connection) error
}

var diskDBs = []diskDB{
	{"sqlite", func(t *testing.T, path string) map[string]string {
		return map[string]string{"driver": sharedADBC(t, "libadbc_driver_sqlite.so"), "uri": "file:" + path}
	}, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) SELECT i FROM s",
		"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", "hex(randomblob(32))", false,
		func(c adbc.Connection) error {
			s, err := diskString(c, "PRAGMA integrity_check")
			if err == nil && s != "ok" {
				err = fmt.Errorf("integrity_check: %s", s)
			}
			return err
		}},
	{"duckdb", func(t *testing.T, path string) map[string]string {
		o := scDuckDBOptions(t)
		o["path"] = path
		return o
	}, "SELECT range + 1 AS i FROM range(%d)",
		"SELECT count(*) FROM information_schema.tables WHERE table_name = '%s'", "md5(random()::VARCHAR) || md5(random()::VARCHAR)", true,
		func(c adbc.Connection) error {
			// DuckDB has no integrity pragma: every block it reads is
			// checksummed, so a checkpoint (which reads and rewrites the
			// tables) and a full read stand for one.
			_, err := faultExec(c, "CHECKPOINT")
			if err == nil {
				_, err = adbctest.QueryInt(context.Background(), c, "SELECT count(*) FROM (SELECT * FROM disk_t) AS t")
			}
			return err
		}},
}

func diskOpen(t *testing.T, d diskDB, path string) (adbc.Database, adbc.Connection) {
	t.Helper()
	db, err := drivermgr.Driver{}.NewDatabase(d.options(t, path))
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Open(context.Background())
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, c
}

// diskSteps are what the child runs once files may no longer grow: name,
// and the work, which must fail.
type diskStep struct {
	name string
	run  func(d diskDB, c adbc.Connection) error
}

var diskSteps = []diskStep{
	{"ingest", func(_ diskDB, c adbc.Connection) error { return diskIngest(c, "disk_ingest") }},
	{"ingest in a transaction", func(_ diskDB, c adbc.Connection) error {
		return diskTx(c, func() error { return diskIngest(c, "disk_ingest_tx") })
	}},
	{"insert", func(d diskDB, c adbc.Connection) error {
		_, err := faultExec(c, "INSERT INTO disk_t SELECT i, "+d.filler+" FROM ("+fmt.Sprintf(d.series, faultIngest)+") AS g")
		return err
	}},
	{"transaction", func(d diskDB, c adbc.Connection) error {
		return diskTx(c, func() error {
			for range 10 {
				if _, err := faultExec(c, "INSERT INTO disk_t SELECT i, "+d.filler+" FROM ("+fmt.Sprintf(d.series, faultIngest/10)+") AS g"); err != nil {
					return err
				}
			}
			return nil
		})
	}},
}

func diskIngest(c adbc.Connection, table string) error {
	gen := scNewGen(memory.DefaultAllocator, 1, faultIngest+1)
	defer gen.Release()
	_, err := adbc.IngestStream(context.Background(), c, gen, table, adbc.OptionValueIngestModeCreate, adbc.IngestStreamOptions{})
	return err
}

// diskTx runs f in a transaction, committed if f succeeds, rolled back if
// f or the commit fails.
func diskTx(c adbc.Connection, f func() error) error {
	po := c.(adbc.PostInitOptions)
	if err := po.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueDisabled); err != nil {
		return fmt.Errorf("autocommit off: %w", err)
	}
	defer po.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueEnabled)
	err := f()
	if err == nil {
		err = c.Commit(context.Background())
	}
	if err != nil {
		c.Rollback(context.Background())
	}
	return err
}

// TestDiskFullChild is not a test: it is a child of TestDiskFull, whose
// files may not grow past diskLimit, running one step.
func TestDiskFullChild(t *testing.T) {
	name := os.Getenv(diskChildEnv)
	if name == "" {
		t.Skip("child process of TestDiskFull")
	}
	i := slices.IndexFunc(diskDBs, func(d diskDB) bool { return d.name == name })
	j := slices.IndexFunc(diskSteps, func(s diskStep) bool { return s.name == os.Getenv(diskStepEnv) })
	if i < 0 || j < 0 {
		t.Fatalf("no database %q or step %q", name, os.Getenv(diskStepEnv))
	}
	d, step := diskDBs[i], diskSteps[j]
	db, c := diskOpen(t, d, os.Getenv(diskPathEnv))
	defer db.Close()
	defer c.Close()
	// Ignored for the whole process: a write from a thread of the
	// database's own would otherwise take the default action and end it.
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: diskLimit, Max: diskLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	err := step.run(d, c)
	code := "ok"
	if ae, ok := adbcerr.From(err); ok {
		code = ae.Code.String()
	} else if err != nil {
		code = "none"
	}
	fmt.Printf("DISK %s|%s|%s\n", step.name, code, strings.ReplaceAll(fmt.Sprint(err), "\n", " "))
}

// SQLite and DuckDB on a disk that fills: every step fails with an ADBC
// error, the file passes its database's check, and it holds the rows
// committed before, no more.
func TestDiskFull(t *testing.T) {
	for _, d := range diskDBs {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "disk.db")
			db, c := diskOpen(t, d, path)
			if _, err := faultExec(c, "CREATE TABLE disk_t (id BIGINT, s VARCHAR)"); err != nil {
				t.Fatal(err)
			}
			if _, err := faultExec(c, "INSERT INTO disk_t SELECT i, 'kept' FROM ("+fmt.Sprintf(d.series, diskKept)+") AS g"); err != nil {
				t.Fatal(err)
			}
			c.Close()
			db.Close()

			for _, step := range diskSteps {
				out, err := selfexec.Command([]string{diskChildEnv + "=" + d.name, diskStepEnv + "=" + step.name, diskPathEnv + "=" + path},
					"-test.run=^TestDiskFullChild$", "-test.count=1", "-test.v").CombinedOutput()
				if err != nil {
					t.Fatalf("%s: child: %v\n%s", step.name, err, out)
				}
				_, rest, ok := strings.Cut(string(out), "DISK ")
				if !ok {
					t.Fatalf("%s: the child said nothing:\n%s", step.name, out)
				}
				rest, _, _ = strings.Cut(rest, "\n")
				f := strings.SplitN(rest, "|", 3)
				t.Logf("%s on a full disk: %s: %s", f[0], f[1], f[2])
				if f[1] == "ok" || f[1] == "none" {
					t.Errorf("%s on a full disk: %s (%s), want an ADBC error", f[0], f[1], f[2])
				}
			}

			db, c = diskOpen(t, d, path)
			defer db.Close()
			defer c.Close()
			if err := d.check(c); err != nil {
				t.Errorf("the file after the full disk: %v", err)
			}
			n, err := adbctest.QueryInt(context.Background(), c, "SELECT count(*) FROM disk_t")
			if err != nil {
				t.Fatal(err)
			}
			if n != diskKept {
				t.Errorf("disk_t holds %d rows, want the %d committed before", n, diskKept)
			}
			for _, table := range []string{"disk_ingest", "disk_ingest_tx"} {
				n, err := adbctest.QueryInt(context.Background(), c, fmt.Sprintf(d.exists, table))
				if err == nil && n > 0 {
					n, err = adbctest.QueryInt(context.Background(), c, "SELECT count(*) FROM "+table)
				}
				if err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				switch {
				case n == 0:
				case table == "disk_ingest" && d.partialIngest:
					t.Logf("%s: the failed ingest in autocommit mode kept %d of its %d rows (batch by batch, as this driver does)", d.name, n, faultIngest)
				default:
					t.Errorf("the failed ingest into %s kept %d of its %d rows", table, n, faultIngest)
				}
			}
		})
	}
}

// diskString is the one string sql returns on c.
func diskString(c adbc.Connection, sql string) (string, error) {
	st, err := c.NewStatement()
	if err != nil {
		return "", err
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		return "", err
	}
	r, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		return "", err
	}
	defer r.Release()
	if !r.Next() {
		return "", fmt.Errorf("no row (%v)", r.Err())
	}
	return r.RecordBatch().Column(0).(*array.String).Value(0), nil
}
