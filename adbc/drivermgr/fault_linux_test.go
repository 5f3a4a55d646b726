package drivermgr_test

// Faults survived: PostgreSQL's backend killed, the whole server killed
// and restarted, a backend stopped, each on a server of the test's own
// (adbctest.StartPG; .ci/postgres). What is promised: a result cut short
// ends with an error wrapping adbcerr.IO, never a clean end; an ingest or a
// transaction is whole or absent; a connection whose server is gone
// answers errors until it is closed; a call with a deadline returns by it;
// nothing leaks.

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// faultRows is the size of the query a fault cuts short (read until
// faultAfter rows, then the fault), and faultIngest of the ingest.
const (
	faultRows   = 10_000_000
	faultAfter  = 100_000
	faultIngest = 1_000_000
)

// A pgFault is a test's own server and a database on it.
type pgFault struct {
	srv *adbctest.PGServer
	db  adbc.Database
}

func newPGFault(t *testing.T) *pgFault {
	lib := sharedADBC(t, "libadbc_driver_postgresql.so")
	noneHeld := adbctest.NothingHeldAfter(t) // before the database is made
	f := &pgFault{srv: adbctest.StartPG(t)}
	db, err := drivermgr.Driver{}.NewDatabase(map[string]string{"driver": lib, "uri": f.srv.URI})
	if err != nil {
		t.Fatal(err)
	}
	f.db = db
	// After the server: cleanups run last first.
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Database.Close: %v", err)
		}
		noneHeld("the fault")
	})
	return f
}

func (f *pgFault) open(t *testing.T) adbc.Connection {
	t.Helper()
	c, err := f.db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run runs sql on c for its effect.
func faultExec(c adbc.Connection, sql string) (int64, error) {
	st, err := c.NewStatement()
	if err != nil {
		return -1, err
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		return -1, err
	}
	return st.ExecuteUpdate(context.Background())
}

// back waits until the server takes connections again (after a backend's
// crash it ends them all and recovers) and returns one.
func (f *pgFault) back(t *testing.T) adbc.Connection {
	t.Helper()
	var c adbc.Connection
	var err error
	if !settle.Eventually(func() bool {
		if c, err = f.db.Open(context.Background()); err != nil {
			return false
		}
		if _, err = adbctest.QueryInt(context.Background(), c, "SELECT 1::int8"); err != nil {
			c.Close()
			return false
		}
		return true
	}) {
		t.Fatalf("the server did not come back: %v", err)
	}
	return c
}

// rows counts the rows of table on a fresh connection; a table that was
// never made has none.
func (f *pgFault) rows(t *testing.T, table string) int64 {
	t.Helper()
	c := f.back(t)
	defer c.Close()
	exists, err := adbctest.QueryInt(context.Background(), c, "SELECT count(*) FROM pg_class WHERE relname = '"+table+"'")
	if err != nil || exists == 0 {
		return 0
	}
	n, err := adbctest.QueryInt(context.Background(), c, "SELECT count(*) FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// broken: c, whose server process is gone, answers an error wrapping a
// documented status on every call, then closes.
func broken(t *testing.T, c adbc.Connection) {
	t.Helper()
	for i := range 2 {
		_, err := adbctest.QueryInt(context.Background(), c, "SELECT 1::int8")
		if err == nil {
			t.Fatalf("call %d on the connection whose server is gone succeeded", i+1)
		}
		if _, ok := adbcerr.From(err); !ok {
			t.Errorf("call %d: %v, an error of no ADBC status", i+1, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Logf("Close of the broken connection: %v", err)
	}
}

// streamUntil runs the 10M-row query on c, reads faultAfter rows, calls
// fault, and reads on: it returns the rows read and how the reader ended.
func streamUntil(t *testing.T, c adbc.Connection, fault func()) (int64, error) {
	t.Helper()
	st, err := c.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(fmt.Sprintf("SELECT g::int8, repeat('x', 50) AS s FROM generate_series(1, %d) g", faultRows)); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var n int64
	for r.Next() {
		if n < faultAfter && n+r.RecordBatch().NumRows() >= faultAfter {
			fault()
		}
		n += r.RecordBatch().NumRows()
	}
	return n, r.Err()
}

// cutShort: a query cut short ended with an IO error, not a clean end.
func cutShort(t *testing.T, n int64, err error) {
	t.Helper()
	t.Logf("the reader ended after %d of %d rows: %v", n, faultRows, err)
	if !errors.Is(err, adbcerr.IO) {
		t.Errorf("the cut-short query ended with %v after %d rows, want an error wrapping adbcerr.IO", err, n)
	}
	if n >= faultRows {
		t.Errorf("all %d rows arrived: the fault came too late to test anything", n)
	}
}

func kill(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}

// ingestUntilKilled ingests faultIngest rows into table on c, killing the
// backend once a fifth have been sent, and returns the ingest's error.
func ingestUntilKilled(t *testing.T, c adbc.Connection, table string) error {
	t.Helper()
	pid := adbctest.Backend(t, c)
	gen := scNewGen(memory.DefaultAllocator, 1, faultIngest+1)
	var killErr error
	killed := false
	gen.onBatch = func(from int64) { // inside the driver's call: no t.Fatal here
		if from > faultIngest/5 && !killed {
			killed, killErr = true, syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	defer gen.Release()
	_, err := adbc.IngestStream(context.Background(), c, gen, table, adbc.OptionValueIngestModeCreate, adbc.IngestStreamOptions{})
	if !killed || killErr != nil {
		t.Fatalf("the ingest ended before the fault (%v; kill: %v)", err, killErr)
	}
	adbctest.Reaped(t, pid)
	return err
}

// wholeOrAbsent: after a failed ingest, table holds all its rows or none.
func (f *pgFault) wholeOrAbsent(t *testing.T, table string, err error) {
	t.Helper()
	if err == nil {
		t.Error("the ingest whose backend was killed succeeded")
	} else if _, ok := adbcerr.From(err); !ok {
		t.Errorf("the ingest failed with %v, of no ADBC status", err)
	}
	n := f.rows(t, table)
	t.Logf("ingest killed: %v; %d rows after", err, n)
	if n != 0 && n != faultIngest {
		t.Errorf("%d of %d rows were kept: a partial ingest", n, faultIngest)
	}
}

// A backend killed (SIGKILL of the process serving the connection) while
// a 10M-row query streams, while a 1M-row ingest runs (autocommit, and in
// a transaction), and while a transaction holds uncommitted rows.
func TestPostgresBackendKilled(t *testing.T) {
	f := newPGFault(t)
	t.Run("streaming query", func(t *testing.T) {
		c := f.open(t)
		pid := adbctest.Backend(t, c)
		n, err := streamUntil(t, c, func() { kill(t, pid, syscall.SIGKILL) })
		cutShort(t, n, err)
		adbctest.Reaped(t, pid)
		broken(t, c)
	})
	t.Run("ingest", func(t *testing.T) {
		c := f.back(t)
		err := ingestUntilKilled(t, c, "fault_ingest")
		broken(t, c)
		f.wholeOrAbsent(t, "fault_ingest", err)
	})
	t.Run("ingest in a transaction", func(t *testing.T) {
		c := f.back(t)
		if err := c.(adbc.PostInitOptions).SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueDisabled); err != nil {
			t.Fatal(err)
		}
		err := ingestUntilKilled(t, c, "fault_ingest_tx")
		broken(t, c)
		f.wholeOrAbsent(t, "fault_ingest_tx", err)
	})
	t.Run("uncommitted transaction", func(t *testing.T) {
		c := f.back(t)
		if _, err := faultExec(c, "CREATE TABLE fault_tx (x int8)"); err != nil {
			t.Fatal(err)
		}
		if err := c.(adbc.PostInitOptions).SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueDisabled); err != nil {
			t.Fatal(err)
		}
		if _, err := faultExec(c, "INSERT INTO fault_tx SELECT g FROM generate_series(1, 1000) g"); err != nil {
			t.Fatal(err)
		}
		pid := adbctest.Backend(t, c)
		kill(t, pid, syscall.SIGKILL)
		adbctest.Reaped(t, pid)
		if err := c.Commit(context.Background()); err == nil {
			t.Error("Commit succeeded after the backend was killed")
		}
		broken(t, c)
		if n := f.rows(t, "fault_tx"); n != 0 {
			t.Errorf("%d uncommitted rows survived the crash", n)
		}
	})
}

// The whole server killed (main process and every backend, as a machine's
// crash) while a query streams, then started again: the cut-short reader
// fails, its connection stays broken, a new one works.
func TestPostgresServerKilled(t *testing.T) {
	f := newPGFault(t)
	c := f.open(t)
	idle := f.open(t) // a connection that was doing nothing
	n, err := streamUntil(t, c, func() { f.srv.KillAll(t) })
	cutShort(t, n, err)
	f.srv.Restart(t)
	broken(t, c)
	broken(t, idle)
	fresh := f.back(t)
	if err := fresh.Close(); err != nil {
		t.Error(err)
	}
}

// A backend that stops answering (SIGSTOP): a call with a deadline returns
// by it (plus the grace a driver that took the cancel gets, 2 s), other
// calls on the connection answer ErrAbandoned at once, a metadata call
// keeps its deadline too; after SIGCONT the connection works again.
func TestPostgresBackendStopped(t *testing.T) {
	f := newPGFault(t)
	c := f.open(t)
	defer c.Close()
	pid := adbctest.Backend(t, c)
	kill(t, pid, syscall.SIGSTOP)
	defer syscall.Kill(pid, syscall.SIGCONT) // a failed test's

	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := adbctest.QueryInt(ctx, c, "SELECT 1::int8")
	took := time.Since(start)
	t.Logf("a call to the stopped backend with a %v deadline returned after %v: %v", deadline, took.Round(time.Millisecond), err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the call returned %v, want its context's error", err)
	}
	if limit := deadline + 2*time.Second + time.Second; took > limit {
		t.Errorf("the call returned after %v, more than %v", took, limit)
	}
	start = time.Now()
	if _, err := adbctest.QueryInt(context.Background(), c, "SELECT 1::int8"); !errors.Is(err, drivermgr.ErrAbandoned) {
		t.Errorf("a call meanwhile: %v, want ErrAbandoned", err)
	} else if took := time.Since(start); took > time.Second {
		t.Errorf("a call meanwhile took %v to say ErrAbandoned", took)
	}

	// A metadata call (GetInfo of the version: a round trip for
	// PostgreSQL) keeps its deadline too; its driver has no cancel for it,
	// so it is abandoned after the short grace.
	meta := f.open(t)
	defer meta.Close()
	metaPID := adbctest.Backend(t, meta)
	kill(t, metaPID, syscall.SIGSTOP)
	defer syscall.Kill(metaPID, syscall.SIGCONT)
	mctx, mcancel := context.WithTimeout(context.Background(), deadline)
	defer mcancel()
	start = time.Now()
	_, err = meta.GetInfo(mctx, []adbc.InfoCode{adbc.InfoVendorVersion})
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > deadline+time.Second {
		t.Errorf("GetInfo on the stopped backend: %v after %v, want its context's error by its deadline", err, took)
	}
	kill(t, metaPID, syscall.SIGCONT)

	kill(t, pid, syscall.SIGCONT)
	var got int64
	if !settle.Eventually(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err = adbctest.QueryInt(ctx, c, "SELECT 7::int8")
		return err == nil
	}) {
		t.Fatalf("after SIGCONT the connection does not work again: %v", err)
	}
	if got != 7 {
		t.Errorf("after SIGCONT: %d, want 7", got)
	}
}
