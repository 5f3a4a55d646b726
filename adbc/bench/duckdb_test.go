package bench

import (
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// DuckDB (in memory, one database per side, made once per process): the
// scan reads n rows of (BIGINT, DOUBLE, VARCHAR, TIMESTAMP) from a table
// that range() filled, every iteration; the ingest appends 1M rows from Go
// memory to an empty table made before each iteration, outside the timer.
//
//	adbc      drivermgr + $DUCKDB_LIB (duckdb_adbc_init), CGO_ENABLED=0 works
//	duckdb-go duckdb-go v2 (cgo, DuckDB linked in statically): its Arrow API
//	          (Arrow.QueryContext, -tags duckdb_arrow) for the scan, its
//	          Appender (AppendRow per row) for the ingest
//
// Both sides run the same DuckDB release (libduckdb 1.5.6 from npm;
// duckdb-go v2.10506.0 links 1.5.6), each its own copy of it.
func BenchmarkDuckDBScan(b *testing.B) {
	n := rowsOr(b, duckScanRows)
	b.Run("adbc", func(b *testing.B) {
		d := duckADBC(b, n)
		benchScan(b, n, d.scan(duckScanQuery, nil))
	})
	b.Run("duckdb-go", func(b *testing.B) {
		if duckdbGoScan == nil {
			b.Skip("duckdb-go's Arrow API needs cgo and -tags duckdb_arrow")
		}
		duckdbGoScan(b, n)
	})
}

func BenchmarkDuckDBIngest(b *testing.B) {
	n := rowsOr(b, ingestRows)
	recs := ingestBatches(n, clientBatchRows)
	defer releaseAll(recs)
	b.Run("adbc", func(b *testing.B) {
		d := duckADBC(b, 0)
		benchIngest(b, n, d.recreate(b, "bench_ingest", duckIngestDDL),
			func() error { return d.ingest("bench_ingest", scanSchema, recs) }, d.count(b, "bench_ingest"))
	})
	b.Run("duckdb-go-appender", func(b *testing.B) {
		if duckdbGoIngest == nil {
			b.Skip("duckdb-go needs cgo and -tags duckdb_arrow")
		}
		duckdbGoIngest(b, n, recs)
	})
}

const (
	duckScanQuery = "SELECT id, x, s, ts FROM bench_scan"
	duckIngestDDL = "CREATE TABLE bench_ingest (id BIGINT, x DOUBLE, s VARCHAR, ts TIMESTAMP)"
)

// duckScanDDL fills bench_scan with n rows, the same on both sides.
func duckScanDDL(n int) string {
	return fmt.Sprintf(`CREATE OR REPLACE TABLE bench_scan AS SELECT range AS id, range::DOUBLE * 0.5 AS x,
		'row-' || range AS s, TIMESTAMP '2020-01-01' + to_seconds(range) AS ts FROM range(%d)`, n)
}

// The cgo files set these (nil: not built in); duckdbInterposed says why
// the ADBC side cannot run in this binary, when it cannot.
var (
	duckdbInterposed string
	duckdbGoScan     func(b *testing.B, n int)
	duckdbGoCollect  func(t *testing.T, n int) []arrow.RecordBatch
	duckdbGoIngest   func(b *testing.B, n int, recs []arrow.RecordBatch)
)

var duckADBCState struct {
	sync.Mutex
	d *adbcDB
	n int // rows in bench_scan
}

// duckADBC is the process's in-memory DuckDB through drivermgr, with
// bench_scan holding n rows (n > 0; 0 leaves it as it is).
func duckADBC(tb testing.TB, n int) *adbcDB {
	tb.Helper()
	lib := duckdbLib(tb)
	if duckdbInterposed != "" {
		tb.Skip(duckdbInterposed)
	}
	s := &duckADBCState
	s.Lock()
	defer s.Unlock()
	if s.d == nil {
		s.d = openADBC(tb, map[string]string{"driver": lib, "entrypoint": "duckdb_adbc_init"})
		d := s.d
		atExit(d.Close)
	}
	if n > 0 && s.n != n {
		s.d.exec(tb, duckScanDDL(n))
		s.n = n
	}
	return s.d
}
