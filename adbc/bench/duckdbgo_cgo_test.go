//go:build cgo && duckdb_arrow

// duckdb-go's side of the DuckDB benchmarks: it needs cgo, and its Arrow
// API the build tag duckdb_arrow. Link with
// -ldflags=-extldflags=-Wl,--exclude-libs,ALL (see duckdbInterposed), or
// the ADBC side is skipped.

package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/ebitengine/purego"
)

func init() {
	duckdbGoIngest = duckdbGoAppend
	duckdbGoScan = duckdbGoArrowScan
	duckdbGoCollect = duckdbGoArrowCollect
	duckdbGoSQL = func(b *testing.B) *sql.DB { return openSQL(b, "duckdb", "") }
	// Before libduckdb.so is loaded: a duckdb symbol found now is the
	// program's own (duckdb-go's static copy), exported to every library.
	if _, err := purego.Dlsym(purego.RTLD_DEFAULT, "duckdb_open"); err == nil {
		duckdbInterposed = "this test binary exports DuckDB's symbols (cgo links with -rdynamic), " +
			"so libduckdb.so would run duckdb-go's static copy of them: build with " +
			"-ldflags=-extldflags=-Wl,--exclude-libs,ALL"
	}
}

// duckdbGoAppend is BenchmarkDuckDBIngest's duckdb-go side: the Appender,
// one AppendRow per row from the Arrow batches, flushed by Close.
func duckdbGoAppend(b *testing.B, n int, recs []arrow.RecordBatch) {
	conn := duckGo(b, 0)
	recreate := func() error {
		duckGoExec(b, conn, "DROP TABLE IF EXISTS bench_ingest")
		duckGoExec(b, conn, duckIngestDDL)
		return nil
	}
	count := func() (int64, error) { return duckGoCount(b, conn, "bench_ingest"), nil }
	vals := make([]driver.Value, 4)
	benchIngest(b, n, recreate, func() error {
		app, err := duckdb.NewAppenderFromConn(conn, "", "bench_ingest")
		if err != nil {
			return err
		}
		for _, rec := range recs {
			id := rec.Column(0).(*array.Int64)
			x := rec.Column(1).(*array.Float64)
			s := rec.Column(2).(*array.String)
			ts := rec.Column(3).(*array.Timestamp)
			for i := 0; i < int(rec.NumRows()); i++ {
				vals[0] = id.Value(i)
				vals[1] = x.Value(i)
				vals[2] = s.Value(i)
				vals[3] = time.UnixMicro(int64(ts.Value(i))).UTC()
				if err := app.AppendRow(vals...); err != nil {
					_ = app.Close()
					return err
				}
			}
		}
		return app.Close()
	}, count)
}

var duckGoState struct {
	sync.Mutex
	conn driver.Conn
	n    int
}

// duckGo is the process's in-memory DuckDB through duckdb-go (one
// connection of its connector), with bench_scan holding n rows (n > 0; 0
// leaves it as it is).
func duckGo(tb testing.TB, n int) driver.Conn {
	s := &duckGoState
	s.Lock()
	defer s.Unlock()
	if s.conn == nil {
		c, err := duckdb.NewConnector("", nil)
		if err != nil {
			tb.Fatal(err)
		}
		conn, err := c.Connect(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		s.conn = conn
		atExit(func() { _ = conn.Close(); _ = c.Close() })
	}
	if n > 0 && s.n != n {
		duckGoExec(tb, s.conn, duckScanDDL(n))
		s.n = n
	}
	return s.conn
}

func duckGoExec(tb testing.TB, conn driver.Conn, query string) {
	tb.Helper()
	if _, err := conn.(driver.ExecerContext).ExecContext(context.Background(), query, nil); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

func duckGoCount(tb testing.TB, conn driver.Conn, table string) int64 {
	tb.Helper()
	rows, err := conn.(driver.QueryerContext).QueryContext(context.Background(), "SELECT count(*) FROM "+table, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		tb.Fatal(err)
	}
	return v[0].(int64)
}

// duckdbGoArrowCollect reads bench_scan (n rows) through duckdb-go's Arrow
// API, the batches kept.
func duckdbGoArrowCollect(t *testing.T, n int) []arrow.RecordBatch {
	ar, err := duckdb.NewArrowFromConn(duckGo(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, func(keep func(arrow.RecordBatch)) (scanStats, error) {
		return duckGoQuery(ar, nil, func(r array.RecordReader, _ time.Time) (scanStats, error) {
			var s scanStats
			for r.Next() {
				rec := r.RecordBatch()
				rec.Retain()
				keep(rec)
				s.rows += rec.NumRows()
			}
			return s, r.Err()
		})
	})
}

// duckdbGoArrowScan is BenchmarkDuckDBScan's duckdb-go side: its Arrow
// API (Arrow.QueryContext), every batch counted and released.
func duckdbGoArrowScan(b *testing.B, n int) {
	conn := duckGo(b, n)
	ar, err := duckdb.NewArrowFromConn(conn)
	if err != nil {
		b.Fatal(err)
	}
	benchScan(b, n, func(mon *memMonitor) (scanStats, error) {
		return duckGoQuery(ar, mon, func(r array.RecordReader, start time.Time) (scanStats, error) {
			return drain(r, start, mon)
		})
	})
}

func duckGoQuery(ar *duckdb.Arrow, mon *memMonitor, read func(array.RecordReader, time.Time) (scanStats, error)) (scanStats, error) {
	start := time.Now()
	r, err := ar.QueryContext(context.Background(), duckScanQuery)
	if err != nil {
		return scanStats{}, err
	}
	defer r.Release()
	return read(r, start)
}
