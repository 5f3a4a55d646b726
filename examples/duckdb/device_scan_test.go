package main

import (
	"context"
	"strconv"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/loader"
	"github.com/purearrow/cdevice/stream"
)

// TestDevice takes a query result onto the default device and hands it to
// a C consumer (testdata/c/duckdb_consumer.c) as an ArrowDeviceArrayStream.
func TestDevice(t *testing.T) {
	lib := needLib(t)
	db := openDB(t, lib)
	const n = 200_000
	want := queryRow(t, db, "SELECT count(*), sum(x) FROM (SELECT CASE WHEN i % 5 = 0 THEN NULL ELSE i * 3 END AS x FROM range(200000) r(i))")
	rows, err := db.Query("SELECT CASE WHEN i % 5 = 0 THEN NULL ELSE i * 3 END AS x, 's' || i AS s FROM range(200000) r(i)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Release()
	dev, why, err := loader.Default(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device %s (%s)", dev.Name(), why)
	ds := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(ds)
	if err := stream.ExportReaderToDevice(context.Background(), rows, dev, ds); err != nil {
		t.Fatal(err)
	}
	drain := ctest.Func(t, ctest.Library(t, "duckdb_consumer"), "dc_drain")
	out := cdevice.New[abi.Array]() // 80 bytes of C memory for four int64
	defer cdevice.Free(out)
	rc := int64(drain(uintptr(unsafe.Pointer(ds)), uintptr(unsafe.Pointer(out))))
	res := (*[4]int64)(unsafe.Pointer(out))
	if rc != 0 {
		t.Fatalf("dc_drain: %d", rc)
	}
	if res[0] != n || strconv.FormatInt(res[0], 10) != want[0] {
		t.Errorf("C consumer read %d rows, want %d (DuckDB: %s)", res[0], n, want[0])
	}
	if abi.DeviceType(res[3]) != dev.Type() {
		t.Errorf("batches on device type %d, want %d", res[3], dev.Type())
	}
	if dev.Type() == abi.DeviceCPU && strconv.FormatInt(res[1], 10) != want[1] {
		t.Errorf("C consumer's sum %d, DuckDB's %s", res[1], want[1])
	}
	t.Logf("C consumer: %d rows in %d batches, sum %d", res[0], res[2], res[1])
}

// intReader is a reader of n int64 rows (a = i, b = 10*i) in batches.
func intReader(n, batch int) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for lo := 0; lo < n; lo += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := lo; i < min(n, lo+batch); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int64Builder).Append(int64(10 * i))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	r, _ := array.NewRecordReader(sc, recs)
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// TestArrowScanLiveLeaks registers a Go stream as a view with
// duckdb_arrow_scan, queries it, and accounts for every export: which stay
// live after the query, after our release of the stream, and after the
// database closes.
func TestArrowScanLiveLeaks(t *testing.T) {
	lib := needLib(t)
	c, err := OpenConn(lib)
	if err != nil {
		t.Fatal(err)
	}
	before := cdevice.LiveLeaks()
	in := intReader(10_000, 1000)
	release, err := c.Scan("v", in)
	in.Release()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Logf("after duckdb_arrow_scan: %+v", cdevice.LiveLeaks())
	got, err := c.QueryStrings("SELECT count(*), sum(b) FROM v")
	if err != nil {
		t.Fatal(err)
	}
	// sum(b) reads column a: DuckDB's by-position bug (TestArrowScanByPosition).
	if got[0][0] != "10000" || (got[0][1] != "499950000" && got[0][1] != "49995000") {
		t.Errorf("query over the view: %v, want [10000 499950000]", got[0])
	}
	afterQuery := cdevice.LiveLeaks()
	t.Logf("after the query: %+v", afterQuery)
	release()
	afterRelease := cdevice.LiveLeaks()
	t.Logf("after releasing the stream: %+v", afterRelease)
	c.Close()
	afterClose := cdevice.LiveLeaks()
	t.Logf("after closing the database: %+v", afterClose)
	// What stays live: only schemas, one per get_schema call DuckDB made
	// (the stream itself was released, no array is held). The same
	// exporter behind ADBC ingest ends at zero (TestTypes, leak check), so
	// these are DuckDB never calling the release of the schemas it takes.
	held := afterClose.ExportedSchemas - before.ExportedSchemas
	rest := afterClose
	rest.ExportedSchemas -= held
	rest.Handles -= int(held)
	if rest != before {
		t.Errorf("besides schemas, exports still live after the database closed: %+v (before: %+v)", afterClose, before)
	}
	if held > 0 {
		t.Logf("DuckDB holds %d schemas from get_schema that it never releases", held)
	}
	duckdbHeldSchemas += held
}

// TestArrowScanByPosition shows DuckDB 1.5's duckdb_arrow_scan reading
// columns by position when a query uses only some of them.
func TestArrowScanByPosition(t *testing.T) {
	lib := needLib(t)
	c, err := OpenConn(lib)
	if err != nil {
		t.Fatal(err)
	}
	before := cdevice.LiveLeaks().ExportedSchemas
	defer func() { // the schemas DuckDB keeps (TestArrowScanLiveLeaks)
		c.Close()
		duckdbHeldSchemas += cdevice.LiveLeaks().ExportedSchemas - before
	}()
	in := intReader(100, 100)
	release, err := c.Scan("v", in)
	in.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	got, err := c.QueryStrings("SELECT sum(b) FROM v")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SELECT sum(b) over duckdb_arrow_scan: %s (right: 49500; sum(a) is 4950)", got[0][0])
	if got[0][0] != "49500" && got[0][0] != "4950" {
		t.Errorf("sum(b) = %s, neither column's sum", got[0][0])
	}
}

// TestErrors: a failing query, a missing library.
func TestErrors(t *testing.T) {
	if _, err := LoadLib("/nonexistent/libduckdb.so"); err == nil {
		t.Error("LoadLib of a missing file: no error")
	}
	lib := needLib(t)
	db := openDB(t, lib)
	if _, err := db.Query("SELECT * FROM no_such_table"); err == nil {
		t.Error("query of a missing table: no error")
	}
	if err := db.Ingest("", intReader(10, 10)); err == nil {
		t.Error("ingest into an empty table name: no error")
	}
}
