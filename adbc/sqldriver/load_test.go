package sqldriver_test

// Load: 1, 8 and 32 goroutines of mixed work (queries, prepared and bound
// statements, ingests, cancels, metadata) for a bounded time, through
// database/sql and through drivermgr directly, on SQLite, PostgreSQL and
// DuckDB. What is promised: every result whole and right; no error but
// the database's own (each counted and named in the log; one without an
// ADBC status fails the test); the live Go heap and RSS flat after
// warm-up (their slopes logged); nothing held once it is over. The log
// has each run's operations a second. The long form:
//
//	go test ./adbc/sqldriver -run TestLoad -v -adbc.load=60s

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/drivermgr"
	"github.com/purearrow/cdevice/adbc/sqldriver"
	"github.com/purearrow/cdevice/internal/testkit/adbctest"
)

var loadFor = flag.Duration("adbc.load", 1500*time.Millisecond, "how long each load run lasts (TestLoad; the long form: 60s)")

// A loadTarget is a database under load, in its dialect.
type loadTarget struct {
	name    string
	options func(t *testing.T) map[string]string
	series  string // the integers 1..%d as the column i
	param   string // its one parameter plus one
}

var loadTargets = []loadTarget{
	{"sqlite", func(t *testing.T) map[string]string {
		return map[string]string{"driver": sqlitePath(t), "uri": "file:" + filepath.Join(t.TempDir(), "load.db")}
	}, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) SELECT i FROM s", "SELECT ? + 1"},
	{"postgresql", func(t *testing.T) map[string]string {
		return map[string]string{"driver": adbctest.Shared(t, "libadbc_driver_postgresql.so"), "uri": adbctest.PostgresURI(t)}
	}, "SELECT g::int8 AS i FROM generate_series(1, %d) g", "SELECT $1::int8 + 1"},
	{"duckdb", func(t *testing.T) map[string]string {
		return map[string]string{"driver": adbctest.DuckDB(t), "entrypoint": "duckdb_adbc_init", "path": filepath.Join(t.TempDir(), "load.duckdb")}
	}, "SELECT range + 1 AS i FROM range(%d)", "SELECT ?::BIGINT + 1"},
}

// loadRows is what a query of the mix returns; loadCancelRows how many
// rows the query it cancels counts.
const (
	loadRows       = 100
	loadIngestRows = 100
	loadCancelRows = 20_000
)

// A loadConn is one goroutine's way to the database: a connection of its
// own (drivermgr) or the shared pool (database/sql).
type loadConn interface {
	// query runs sql (with args bound, prepared once per conn) and returns
	// its rows and the last row's first column.
	query(ctx context.Context, sql string, args ...int64) (rows, last int64, err error)
	// ingest appends loadIngestRows rows to table, making it if need be.
	ingest(ctx context.Context, table string) error
	// metadata asks GetInfo and GetTableTypes, reading both to the end.
	metadata(ctx context.Context) error
	// heal replaces a connection that answers adbcerr.Abandoned, as a
	// pool does (the old one closes once its call returns).
	heal() error
	close() error
}

// adbcConn is drivermgr directly.
type adbcConn struct {
	db       adbc.Database
	c        adbc.Connection
	prepared map[string]adbc.Statement
}

func (a *adbcConn) heal() error {
	a.close() // deferred by drivermgr until the abandoned call returns
	a.prepared = map[string]adbc.Statement{}
	c, err := a.db.Open(context.Background())
	a.c = c
	return err
}

func (a *adbcConn) query(ctx context.Context, q string, args ...int64) (int64, int64, error) {
	st := a.prepared[q]
	if st == nil {
		var err error
		if st, err = a.c.NewStatement(); err != nil {
			return 0, 0, err
		}
		if err := st.SetSqlQuery(q); err != nil {
			st.Close()
			return 0, 0, err
		}
		if len(args) == 0 {
			defer st.Close()
		} else {
			if err := st.Prepare(ctx); err != nil {
				st.Close()
				return 0, 0, err
			}
			a.prepared[q] = st
		}
	}
	if len(args) > 0 {
		rec := int64Batch(args...)
		err := st.Bind(ctx, rec)
		rec.Release()
		if err != nil {
			return 0, 0, err
		}
	}
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer r.Release()
	return readInts(r)
}

func (a *adbcConn) ingest(ctx context.Context, table string) error {
	return ingestInto(ctx, a.c, table)
}

func (a *adbcConn) metadata(ctx context.Context) error { return metadataOf(ctx, a.c) }

func (a *adbcConn) close() error {
	if a.c == nil {
		return nil
	}
	var errs []error
	for _, st := range a.prepared {
		errs = append(errs, st.Close())
	}
	return errors.Join(append(errs, a.c.Close())...)
}

// poolConn is database/sql: one goroutine's prepared statements on the
// shared pool.
type poolConn struct {
	db       *sql.DB
	prepared map[string]*sql.Stmt
}

func (p *poolConn) query(ctx context.Context, q string, args ...int64) (int64, int64, error) {
	var rows *sql.Rows
	var err error
	if len(args) > 0 {
		st := p.prepared[q]
		if st == nil {
			if st, err = p.db.PrepareContext(ctx, q); err != nil {
				return 0, 0, err
			}
			p.prepared[q] = st
		}
		rows, err = st.QueryContext(ctx, args[0])
	} else {
		rows, err = p.db.QueryContext(ctx, q)
	}
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var n, last int64
	for rows.Next() {
		var v sql.NullInt64
		if err := rows.Scan(&v); err != nil {
			return n, last, err
		}
		n, last = n+1, v.Int64
	}
	return n, last, rows.Err()
}

// raw runs f on the ADBC connection beneath one of the pool's.
func (p *poolConn) raw(ctx context.Context, f func(adbc.Connection) error) error {
	c, err := p.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error { return f(dc.(sqldriver.Conn).ADBCConnection()) })
}

func (p *poolConn) ingest(ctx context.Context, table string) error {
	return p.raw(ctx, func(c adbc.Connection) error { return ingestInto(ctx, c, table) })
}

func (p *poolConn) metadata(ctx context.Context) error {
	return p.raw(ctx, func(c adbc.Connection) error { return metadataOf(ctx, c) })
}

func (p *poolConn) heal() error { return nil } // the pool does it

func (p *poolConn) close() error {
	var errs []error
	for _, st := range p.prepared {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

func int64Batch(vals ...int64) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(len(vals)))
}

// readInts reads r to the end: its rows, and the last row's first column
// (as an integer, whichever width the driver chose).
func readInts(r array.RecordReader) (n, last int64, err error) {
	for r.Next() {
		rec := r.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		n += rec.NumRows()
		i := int(rec.NumRows() - 1)
		switch col := rec.Column(0).(type) {
		case *array.Int64:
			last = col.Value(i)
		case *array.Int32:
			last = int64(col.Value(i))
		case *array.Decimal128:
			last = int64(col.Value(i).LowBits())
		default:
			return n, last, fmt.Errorf("a column of %s", col.DataType())
		}
	}
	return n, last, r.Err()
}

func ingestInto(ctx context.Context, c adbc.Connection, table string) error {
	rec := int64Batch(make([]int64, loadIngestRows)...)
	defer rec.Release()
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rr.Release()
	n, err := adbc.IngestStream(ctx, c, rr, table, adbc.OptionValueIngestModeCreateAppend, adbc.IngestStreamOptions{})
	if err == nil && n != -1 && n != loadIngestRows {
		return fmt.Errorf("ingest: %d rows, want %d", n, loadIngestRows)
	}
	return err
}

func metadataOf(ctx context.Context, c adbc.Connection) error {
	r, err := c.GetInfo(ctx, []adbc.InfoCode{adbc.InfoVendorName, adbc.InfoDriverName})
	if err != nil {
		return err
	}
	for r.Next() {
	}
	err = r.Err()
	r.Release()
	if err != nil {
		return err
	}
	r, err = c.GetTableTypes(ctx)
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// A loadTally counts a run's operations and errors.
type loadTally struct {
	ops    atomic.Int64
	ok     atomic.Int64 // of ops, those that succeeded
	mu     sync.Mutex
	errors map[string]int
	wrong  []string // wrong results and errors that are not the database's
}

// failed records err of op: the database's own errors and a cancel's
// context error are counted by name; anything else is wrong.
func (l *loadTally) failed(op string, err error) {
	name := op + ": "
	ours := false
	switch ae, isADBC := adbcerr.From(err); {
	case op == "cancel" && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		name += "its context's deadline"
	case errors.Is(err, drivermgr.ErrAbandoned):
		name += "ErrAbandoned (a cancelled call the driver had not stopped yet; the connection replaced)"
	case isADBC:
		msg, _, _ := strings.Cut(ae.Msg, "\n")
		if len(msg) > 70 {
			msg = msg[:70] + "…"
		}
		name += ae.Code.String() + ": " + msg
	default:
		name += err.Error()
		ours = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors[name]++
	if ours {
		l.wrong = append(l.wrong, name)
	}
}

func (l *loadTally) wrongResult(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wrong = append(l.wrong, fmt.Sprintf(format, args...))
}

// loadWork is goroutine g's work on lc until ctx ends.
func loadWork(ctx context.Context, tgt loadTarget, lc loadConn, g int, table string, tally *loadTally) {
	queryAll := fmt.Sprintf(tgt.series, loadRows)
	slow := "SELECT count(*) FROM (" + fmt.Sprintf(tgt.series, loadCancelRows) + ") AS s"
	for i := 0; ctx.Err() == nil; i++ {
		var op string
		var err error
		switch i % 5 {
		case 0:
			op = "query"
			var n, last int64
			if n, last, err = lc.query(ctx, queryAll); err == nil && (n != loadRows || last != loadRows) {
				tally.wrongResult("query: %d rows ending in %d, want %d", n, last, loadRows)
			}
		case 1:
			op = "bound"
			v := int64(g*1_000_000 + i)
			var n, last int64
			if n, last, err = lc.query(ctx, tgt.param, v); err == nil && (n != 1 || last != v+1) {
				tally.wrongResult("bound: %d rows, %d for %d", n, last, v)
			}
		case 2:
			op = "ingest"
			err = lc.ingest(ctx, table)
		case 3:
			op = "cancel"
			cctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			_, _, err = lc.query(cctx, slow)
			cancel()
		case 4:
			op = "metadata"
			err = lc.metadata(ctx)
		}
		if err != nil && ctx.Err() == nil {
			tally.failed(op, err)
			if errors.Is(err, adbcerr.Abandoned) {
				if err := lc.heal(); err != nil {
					tally.wrongResult("replacing an abandoned connection: %v", err)
					return
				}
			}
		} else if err == nil {
			tally.ok.Add(1)
		}
		tally.ops.Add(1)
	}
}

// A memSampler samples the live Go heap and the RSS while a run goes.
type memSampler struct {
	at         []time.Duration
	heap, rss  []float64
	stop, done chan struct{}
}

func sampleMemory(every time.Duration) *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(m.done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				metrics.Read(s)
				m.at = append(m.at, time.Since(start))
				m.heap = append(m.heap, float64(s[0].Value.Uint64()))
				m.rss = append(m.rss, float64(rss()))
			}
		}
	}()
	return m
}

// finish stops sampling and returns the slopes after warm-up (the first
// third), in MiB a minute, and the growth of the live heap from the
// second third's median to the last third's, in bytes.
func (m *memSampler) finish() (heapSlope, rssSlope, heapGrowth float64) {
	close(m.stop)
	<-m.done
	k := len(m.at) / 3
	if len(m.at)-k < 4 {
		return 0, 0, 0
	}
	at, heap, rss := m.at[k:], m.heap[k:], m.rss[k:]
	third := len(at) / 2
	return slope(at, heap), slope(at, rss), median(heap[third:]) - median(heap[:third])
}

// slope is the least-squares slope of ys over xs, in MiB a minute.
func slope(xs []time.Duration, ys []float64) float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(xs))
	for i, x := range xs {
		m := x.Minutes()
		sx, sy, sxx, sxy = sx+m, sy+ys[i], sxx+m*m, sxy+m*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d / (1 << 20)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// rss is this process's resident memory (Linux; 0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func TestLoad(t *testing.T) {
	for _, tgt := range loadTargets {
		t.Run(tgt.name, func(t *testing.T) {
			opts := tgt.options(t)
			for _, path := range []string{"drivermgr", "database/sql"} {
				for _, n := range []int{1, 8, 32} {
					t.Run(fmt.Sprintf("%s/%d", path, n), func(t *testing.T) {
						loadRun(t, tgt, opts, path, n)
					})
				}
			}
		})
	}
}

// loadRun is one run: n goroutines through path for loadFor.
func loadRun(t *testing.T, tgt loadTarget, opts map[string]string, path string, n int) {
	noneHeld := adbctest.NothingHeldAfter(t)
	var db adbc.Database
	var pool *sql.DB
	var err error
	if path == "database/sql" {
		var dsn []string
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			dsn = append(dsn, k+"="+opts[k])
		}
		pool, err = sql.Open("adbc", strings.Join(dsn, ";"))
	} else {
		db, err = drivermgr.Driver{}.NewDatabase(opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("load_%s_%d_%d", strings.ReplaceAll(path, "/", ""), n, time.Now().UnixNano()%1_000_000)
	conns := make([]loadConn, n)
	for g := range conns {
		if pool != nil {
			conns[g] = &poolConn{db: pool, prepared: map[string]*sql.Stmt{}}
			continue
		}
		c, err := db.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[g] = &adbcConn{db: db, c: c, prepared: map[string]adbc.Statement{}}
	}

	tally := &loadTally{errors: map[string]int{}}
	mem := sampleMemory(*loadFor / 30)
	ctx, cancel := context.WithTimeout(context.Background(), *loadFor)
	start := time.Now()
	var wg sync.WaitGroup
	for g, lc := range conns {
		wg.Go(func() { loadWork(ctx, tgt, lc, g, fmt.Sprintf("%s_%d", prefix, g), tally) })
	}
	wg.Wait()
	took := time.Since(start)
	cancel()
	heapSlope, rssSlope, growth := mem.finish()

	// The ingests' tables go (the PostgreSQL server is shared), dropped
	// through the first connection that is still there.
	for _, cleanup := range conns {
		if a, ok := cleanup.(*adbcConn); ok && a.c == nil {
			continue
		}
		for g := range conns {
			if _, _, err := cleanup.query(context.Background(), "DROP TABLE IF EXISTS "+fmt.Sprintf("%s_%d", prefix, g)); err != nil {
				t.Logf("dropping the ingest table: %v", err)
			}
		}
		break
	}
	for _, lc := range conns {
		if err := lc.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	if pool != nil {
		if err := pool.Close(); err != nil {
			t.Errorf("DB.Close: %v", err)
		}
	} else if err := db.Close(); err != nil {
		t.Errorf("Database.Close: %v", err)
	}

	t.Logf("%s, %s, %d goroutines: %.0f operations/s, %.0f/s succeeded (%d in %v); live heap %+.2f MiB/min, RSS %+.2f MiB/min after warm-up",
		tgt.name, path, n, float64(tally.ops.Load())/took.Seconds(), float64(tally.ok.Load())/took.Seconds(),
		tally.ops.Load(), took.Round(time.Millisecond), heapSlope, rssSlope)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range tally.errors {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Logf("  %6d × %s", tally.errors[name], name)
	}
	for _, w := range tally.wrong {
		t.Errorf("not the database's: %s", w)
	}
	if tally.ops.Load() == 0 {
		t.Error("no operation finished")
	}
	// A leak of a batch an operation would show here within seconds; the
	// bound leaves room for what is in flight at once.
	if limit := float64(16<<20 + n*(1<<20)); growth > limit {
		t.Errorf("the live heap grew by %.1f MiB after warm-up", growth/(1<<20))
	}
	noneHeld("the run")
}
