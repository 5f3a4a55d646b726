package main

import "testing"

// BenchmarkQueryImport reads a 10M-row (BIGINT, VARCHAR) result, generated
// by DuckDB, per iteration through DB.Query (drivermgr: DuckDB's
// ArrowArrayStream imported batch by batch). The query runs every
// iteration, so DuckDB's execution is in the figure; rows/s is rows read
// per second of wall time. drivermgr against DuckDB's own Go client is
// adbc/bench's; the cost of a call through drivermgr beside bare purego
// calls, drivermgr's BenchmarkSelect1.
const (
	benchRows = 10_000_000
	benchSQL  = "SELECT range AS i, 'row-' || range AS s FROM range(10000000)"
)

func BenchmarkQueryImport(b *testing.B) {
	db := openDB(b, needLib(b))
	for b.Loop() {
		r, err := db.Query(benchSQL)
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for r.Next() {
			rows += r.RecordBatch().NumRows()
		}
		err = r.Err()
		r.Release()
		if err != nil {
			b.Fatal(err)
		}
		if rows != benchRows {
			b.Fatalf("read %d rows, want %d", rows, benchRows)
		}
	}
	reportRows(b)
}

// reportRows reports rows/s over the whole run, query execution included.
func reportRows(b *testing.B) {
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}
