package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// The sizes; BENCH_ROWS overrides every one of them.
const (
	pgScanRows     = 10_000_000
	duckScanRows   = 10_000_000
	sqliteScanRows = 1_000_000
	ingestRows     = 1_000_000
)

// clientBatchRows is the number of rows per Arrow batch that the Go
// clients' scans (pgx, modernc) build; BENCH_BATCH overrides it.
const clientBatchRows = 65_536

var cleanups struct {
	sync.Mutex
	fns []func()
}

// atExit registers fn to run when the test binary ends (fixtures that
// live across benchmarks: databases, temporary files).
func atExit(fn func()) {
	cleanups.Lock()
	defer cleanups.Unlock()
	cleanups.fns = append(cleanups.fns, fn)
}

func TestMain(m *testing.M) {
	code := m.Run()
	cleanups.Lock()
	for i := len(cleanups.fns) - 1; i >= 0; i-- {
		cleanups.fns[i]()
	}
	cleanups.Unlock()
	os.Exit(code)
}

// envInt is the positive integer in the environment variable name, or def.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

func rowsOr(tb testing.TB, def int) int { return envInt(tb, "BENCH_ROWS", def) }

func batchRows(tb testing.TB) int { return envInt(tb, "BENCH_BATCH", clientBatchRows) }

// sharedDriver is the path of one of the ADBC drivers built in
// ../shared/adbc ($ADBC_SHARED names that directory elsewhere); the
// benchmark is skipped, saying why, when it is not there.
func sharedDriver(tb testing.TB, file string) string {
	tb.Helper()
	dir := os.Getenv("ADBC_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "adbc")
	}
	p, err := filepath.Abs(filepath.Join(dir, file))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		tb.Skipf("no %s (set ADBC_SHARED to the directory of Arrow's ADBC drivers): %v", file, err)
	}
	return p
}

// postgresURI is $ADBC_POSTGRESQL_URI, the server the PostgreSQL
// benchmarks use; skipped without one.
func postgresURI(tb testing.TB) string {
	tb.Helper()
	uri := os.Getenv("ADBC_POSTGRESQL_URI")
	if uri == "" {
		tb.Skip("ADBC_POSTGRESQL_URI is not set (.ci/postgres start runs a server and prints it)")
	}
	return uri
}

// duckdbLib is $DUCKDB_LIB, DuckDB's shared library (which is its ADBC
// driver too); skipped without one.
func duckdbLib(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("DUCKDB_LIB")
	if p == "" {
		tb.Skip("DUCKDB_LIB is not set (examples/duckdb/ci.sh lib fetches libduckdb.so and prints its path)")
	}
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("DUCKDB_LIB: %v", err)
	}
	return p
}

// adbcDB is a database and one connection of it, through drivermgr.
type adbcDB struct {
	db   adbc.Database
	cnxn adbc.Connection
}

func openADBC(tb testing.TB, opts map[string]string) *adbcDB {
	db, err := drivermgr.Driver{}.NewDatabase(opts)
	if err != nil {
		tb.Fatalf("drivermgr NewDatabase: %v", err)
	}
	cnxn, err := db.Open(context.Background())
	if err != nil {
		_ = db.Close()
		tb.Fatalf("drivermgr Open: %v", err)
	}
	return &adbcDB{db: db, cnxn: cnxn}
}

func (d *adbcDB) Close() {
	_ = d.cnxn.Close()
	_ = d.db.Close()
}

// exec runs a statement for its effect.
func (d *adbcDB) exec(tb testing.TB, query string) {
	tb.Helper()
	st, err := d.cnxn.NewStatement()
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(query); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.ExecuteUpdate(context.Background()); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// query runs a query; opts are statement options set first. The statement
// is closed when the reader is released.
func (d *adbcDB) query(ctx context.Context, query string, opts map[string]string) (array.RecordReader, error) {
	st, err := d.cnxn.NewStatement()
	if err != nil {
		return nil, err
	}
	for k, v := range opts {
		if err := st.SetOption(k, v); err != nil {
			_ = st.Close()
			return nil, fmt.Errorf("SetOption(%s=%s): %w", k, v, err)
		}
	}
	if err := st.SetSqlQuery(query); err != nil {
		_ = st.Close()
		return nil, err
	}
	r, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &closingReader{RecordReader: r, st: st}, nil
}

type closingReader struct {
	array.RecordReader
	st   adbc.Statement
	once sync.Once
}

func (r *closingReader) Release() {
	r.RecordReader.Release()
	r.once.Do(func() { _ = r.st.Close() })
}

// queryScalar is the first column of the first row of a query's result, as
// an int64 (a count).
func (d *adbcDB) queryScalar(tb testing.TB, query string) int64 {
	tb.Helper()
	r, err := d.query(context.Background(), query, nil)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		switch c := rec.Column(0).(type) {
		case *array.Int64:
			return c.Value(0)
		case *array.Int32:
			return int64(c.Value(0))
		default:
			tb.Fatalf("%s: a %s", query, c.DataType())
		}
	}
	if err := r.Err(); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	tb.Fatalf("%s: no rows", query)
	return 0
}

// ingest appends recs to table (which exists) through drivermgr: bulk
// ingestion, the batches bound as a stream (exported without a copy).
func (d *adbcDB) ingest(table string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		return err
	}
	defer rdr.Release()
	_, err = adbc.IngestStream(context.Background(), d.cnxn, rdr, table, adbc.OptionValueIngestModeAppend, adbc.IngestStreamOptions{})
	return err
}

// recreate drops and makes table with ddl.
func (d *adbcDB) recreate(tb testing.TB, table, ddl string) func() error {
	return func() error {
		d.exec(tb, "DROP TABLE IF EXISTS "+table)
		d.exec(tb, ddl)
		return nil
	}
}

// count is the number of rows in table.
func (d *adbcDB) count(tb testing.TB, table string) func() (int64, error) {
	return func() (int64, error) { return d.queryScalar(tb, "SELECT count(*) FROM "+table), nil }
}

// scanStats is what a scan reports beside its time.
type scanStats struct {
	rows       int64
	batches    int64
	firstBatch time.Duration // from the query's start to the first batch
}

// drain reads r to the end, counting rows and batches; mon samples the
// heap after each batch (while it is live).
func drain(r array.RecordReader, start time.Time, mon *memMonitor) (scanStats, error) {
	var s scanStats
	for r.Next() {
		rec := r.RecordBatch()
		if s.batches == 0 {
			s.firstBatch = time.Since(start)
		}
		s.batches++
		s.rows += rec.NumRows()
		mon.sample()
	}
	return s, r.Err()
}

// benchScan runs scan (which reads the n rows of one query) per
// iteration and reports rows/s, the batches, and the peaks of memory.
func benchScan(b *testing.B, n int, scan func(mon *memMonitor) (scanStats, error)) {
	var rep scanReport
	mon := startMemMonitor()
	rep.start()
	for b.Loop() {
		s, err := scan(mon)
		if err != nil {
			b.Fatal(err)
		}
		rep.add(b, int64(n), s)
	}
	rep.report(b, mon)
}

// scan is a benchScan scan: the query through drivermgr, its batches
// counted (not touched: they are the driver's memory, zero-copy) and
// released; opts are statement options.
func (d *adbcDB) scan(query string, opts map[string]string) func(mon *memMonitor) (scanStats, error) {
	return func(mon *memMonitor) (scanStats, error) {
		start := time.Now()
		r, err := d.query(context.Background(), query, opts)
		if err != nil {
			return scanStats{}, err
		}
		defer r.Release()
		return drain(r, start, mon)
	}
}

// emit makes a batch of what bld holds and counts it; keep (when not nil)
// takes it over, else it is released.
func (s *scanStats) emit(bld *array.RecordBuilder, start time.Time, mon *memMonitor, keep func(arrow.RecordBatch)) {
	rec := bld.NewRecordBatch()
	if s.batches == 0 {
		s.firstBatch = time.Since(start)
	}
	s.batches++
	s.rows += rec.NumRows()
	mon.sample()
	if keep != nil {
		keep(rec)
	} else {
		rec.Release()
	}
}

// scanReport accumulates the scans of a benchmark's iterations.
type scanReport struct {
	rows, batches int64
	first         time.Duration
	iters         int64
	cpu0          time.Duration
}

// start marks the start of the timed loop, for the process's CPU time.
func (r *scanReport) start() { r.cpu0 = processCPU() }

func (r *scanReport) add(b *testing.B, want int64, s scanStats) {
	if s.rows != want {
		b.Fatalf("read %d rows, want %d", s.rows, want)
	}
	r.rows += s.rows
	r.batches += s.batches
	r.first += s.firstBatch
	r.iters++
}

// report reports rows/s over the timed part of the run, the mean rows per
// batch and the mean time to the first batch.
func (r *scanReport) report(b *testing.B, mon *memMonitor) {
	b.ReportMetric(float64(r.rows)/b.Elapsed().Seconds(), "rows/s")
	if r.iters > 0 {
		b.ReportMetric(float64(r.rows)/float64(max(r.batches, 1)), "rows/batch")
		b.ReportMetric(float64(r.first.Microseconds())/1e3/float64(r.iters), "first-batch-ms")
	}
	if r.cpu0 > 0 && r.rows > 0 {
		b.ReportMetric(float64(processCPU()-r.cpu0)/float64(r.rows), "cpu-ns/row")
	}
	mon.report(b)
}

// memMonitor tracks the peak of the Go heap (HeapInuse: the spans holding
// objects, live or not yet swept) by sampling runtime/metrics, which does
// not stop the world, every millisecond in a goroutine and at each batch
// (sample), and the peak resident set size of the process (VmHWM, reset
// at the start through /proc/self/clear_refs) above the resident size at
// the start: memory the C side holds (a driver's batches, its buffers)
// is not on the Go heap, and shows there.
type memMonitor struct {
	mu       sync.Mutex
	samples  []metrics.Sample
	peakHeap uint64
	rss0     uint64
	stop     chan struct{}
	done     chan struct{}
}

func startMemMonitor() *memMonitor {
	runtime.GC()
	debug.FreeOSMemory()
	m := &memMonitor{
		samples: []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
		},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	resetPeakRSS()
	m.rss0 = procStatus("VmRSS")
	m.sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *memMonitor) sample() {
	if m == nil {
		return
	}
	m.mu.Lock()
	metrics.Read(m.samples)
	h := m.samples[0].Value.Uint64() + m.samples[1].Value.Uint64()
	if h > m.peakHeap {
		m.peakHeap = h
	}
	m.mu.Unlock()
}

// report stops the monitor and reports peak-heap-MB and peak-rss-MB.
func (m *memMonitor) report(b *testing.B) {
	if m == nil {
		return
	}
	close(m.stop)
	<-m.done
	m.sample()
	b.ReportMetric(float64(m.peakHeap)/(1<<20), "peak-heap-MB")
	if hwm := procStatus("VmHWM"); hwm > 0 {
		b.ReportMetric(float64(hwm-min(hwm, m.rss0))/(1<<20), "peak-rss-MB")
	}
}

// resetPeakRSS resets the kernel's VmHWM of this process (Linux: writing 5
// to clear_refs); elsewhere it does nothing.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// procStatus is a "kB" field of /proc/self/status, in bytes; 0 where there
// is none.
func procStatus(field string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(field+":")) {
			continue
		}
		f := bytes.Fields(line[len(field)+1:])
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// The scans' and ingests' columns: (bigint, double, text, timestamp).
var scanSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
}, nil)

// epoch2020 is the first row's timestamp; row i is i seconds later.
var epoch2020 = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// ingestBatches is the ingest benchmarks' source: n rows of scanSchema in
// Go memory, in batches of batch rows, row i = (i, i*0.5, "row-i",
// 2020-01-01 + i s).
func ingestBatches(n, batch int) []arrow.RecordBatch {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, scanSchema)
	defer b.Release()
	id := b.Field(0).(*array.Int64Builder)
	x := b.Field(1).(*array.Float64Builder)
	s := b.Field(2).(*array.StringBuilder)
	ts := b.Field(3).(*array.TimestampBuilder)
	var recs []arrow.RecordBatch
	base := epoch2020.UnixMicro()
	for i := 0; i < n; i++ {
		id.Append(int64(i))
		x.Append(float64(i) * 0.5)
		s.Append("row-" + strconv.Itoa(i))
		ts.Append(arrow.Timestamp(base + int64(i)*1e6))
		if id.Len() == batch || i == n-1 {
			recs = append(recs, b.NewRecordBatch())
		}
	}
	return recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// benchIngest runs per iteration setup (untimed: the empty target table),
// ingest (timed) and count (untimed: the rows the table holds, which must
// be n), and reports rows/s over the timed part and the process's CPU
// time per row in it.
func benchIngest(b *testing.B, n int, setup func() error, ingest func() error, count func() (int64, error)) {
	var rows int64
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := setup(); err != nil {
			b.Fatal(err)
		}
		c := processCPU()
		b.StartTimer()
		err := ingest()
		b.StopTimer()
		cpu += processCPU() - c
		if err != nil {
			b.Fatal(err)
		}
		got, err := count()
		if err != nil {
			b.Fatal(err)
		}
		if got != int64(n) {
			b.Fatalf("%d rows ingested, want %d", got, n)
		}
		rows += int64(n)
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 && rows > 0 {
		b.ReportMetric(float64(cpu)/float64(rows), "cpu-ns/row")
	}
}
