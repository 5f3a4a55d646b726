package bench

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The comparisons are fair only if both sides produce the same Arrow
// columns from the same rows: these tests read sameRows rows both ways
// (the Go clients in batches of sameBatch rows) and compare the columns.
const (
	sameRows  = 5000
	sameBatch = 1000
)

func TestSamePostgres(t *testing.T) {
	uri := postgresURI(t)
	query := "SELECT id, x, s, ts FROM " + pgScanTable(t, uri, sameRows)
	d := openADBC(t, map[string]string{"driver": sharedDriver(t, "libadbc_driver_postgresql.so"), "uri": uri})
	defer d.Close()
	want := collectADBC(t, d, query, nil)
	conn := pgxConnect(t, uri)
	for _, raw := range []bool{false, true} {
		got := collect(t, func(keep func(arrow.RecordBatch)) (scanStats, error) {
			return pgxScan(context.Background(), conn, query, sameBatch, raw, nil, keep)
		})
		sameColumns(t, "pgx", want, got)
	}
}

func TestSameSQLite(t *testing.T) {
	drv := sharedDriver(t, "libadbc_driver_sqlite.so")
	path := sqliteScanFile(t, sameRows)
	d := openADBC(t, map[string]string{"driver": drv, "uri": "file:" + path + "?mode=ro"})
	defer d.Close()
	want := collectADBC(t, d, sqliteScanQuery, nil)
	db := moderncOpen(t, "file:"+path+"?mode=ro")
	for _, raw := range []bool{false, true} {
		got := collect(t, func(keep func(arrow.RecordBatch)) (scanStats, error) {
			return moderncScan(context.Background(), db, sameBatch, raw, nil, keep)
		})
		sameColumns(t, "modernc", want, got)
	}
}

func TestSameDuckDB(t *testing.T) {
	want := collectADBC(t, duckADBC(t, sameRows), duckScanQuery, nil)
	if duckdbGoCollect == nil {
		t.Skip("duckdb-go's Arrow API needs cgo and -tags duckdb_arrow")
	}
	sameColumns(t, "duckdb-go", want, duckdbGoCollect(t, sameRows))
}

// collectADBC reads a query's batches through drivermgr, kept.
func collectADBC(t *testing.T, d *adbcDB, query string, opts map[string]string) []arrow.RecordBatch {
	t.Helper()
	r, err := d.query(context.Background(), query, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var recs []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseAll(recs) })
	return recs
}

// collect runs a Go client's scan and keeps its batches.
func collect(t *testing.T, scan func(keep func(arrow.RecordBatch)) (scanStats, error)) []arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	t.Cleanup(func() { releaseAll(recs) })
	if _, err := scan(func(r arrow.RecordBatch) { recs = append(recs, r) }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// sameColumns says whether two batch sequences hold the same columns (the
// same types, the same values), whatever their batch boundaries.
func sameColumns(t *testing.T, who string, want, got []arrow.RecordBatch) {
	t.Helper()
	if len(want) == 0 || len(got) == 0 {
		t.Fatalf("%s: %d and %d batches", who, len(want), len(got))
	}
	ws, gs := want[0].Schema(), got[0].Schema()
	if ws.NumFields() != gs.NumFields() {
		t.Fatalf("%s: schema %v, want %v", who, gs, ws)
	}
	for i := 0; i < ws.NumFields(); i++ {
		if !arrow.TypeEqual(ws.Field(i).Type, gs.Field(i).Type) || ws.Field(i).Name != gs.Field(i).Name {
			t.Fatalf("%s: column %d is %s %s, want %s %s", who, i, gs.Field(i).Name, gs.Field(i).Type, ws.Field(i).Name, ws.Field(i).Type)
		}
		w, g := column(t, want, i), column(t, got, i)
		if !array.Equal(w, g) {
			t.Errorf("%s: column %s differs:\n got %v\nwant %v", who, ws.Field(i).Name, g, w)
		}
		w.Release()
		g.Release()
	}
}

func column(t *testing.T, recs []arrow.RecordBatch, i int) arrow.Array {
	cols := make([]arrow.Array, len(recs))
	for j, r := range recs {
		cols[j] = r.Column(i)
	}
	a, err := array.Concatenate(cols, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
