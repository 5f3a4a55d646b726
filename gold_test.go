package cdevice_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// goldFormats are the two IPC encodings every gold case comes in.
var goldFormats = []string{".stream", ".arrow_file"}

// roundTrip exports rec into off-heap structs and imports it back, failing
// the test on any error; the structs are returned for inspection.
func roundTrip(tb testing.TB, rec arrow.RecordBatch) (arrow.RecordBatch, *abi.Array, *abi.Schema) {
	tb.Helper()
	arr, sch := offHeap[abi.Array](tb), offHeap[abi.Schema](tb)
	if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
		tb.Fatal(err)
	}
	got, err := cdevice.ImportRecordBatch(arr, sch)
	if err != nil {
		tb.Fatal(err)
	}
	return got, arr, sch
}

// The shared gold-file and comparison helpers (internal/testsupport).
var (
	goldCases   = testsupport.GoldCases
	readGold    = testsupport.ReadGold
	schemaDiffs = testsupport.SchemaDiffs
)

func offHeap[T cdevice.Struct](tb testing.TB) *T { return testsupport.OffHeap[T](tb) }

func TestGoldRoundTrip(t *testing.T) {
	forEachGoldBatchFormat(t, func(t *testing.T, name string) {
		schema, recs := readGold(t, name)
		arr, sch := offHeap[abi.Array](t), offHeap[abi.Schema](t)
		for i, rec := range recs {
			if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
				t.Fatalf("batch %d: export: %v", i, err)
			}
			got, err := cdevice.ImportRecordBatch(arr, sch)
			if err != nil {
				t.Fatalf("batch %d: import: %v", i, err)
			}
			if !arr.Released() || !sch.Released() {
				t.Errorf("batch %d: the import did not move its input: array released=%v, schema released=%v", i, arr.Released(), sch.Released())
			}
			for _, d := range schemaDiffs(schema, got.Schema()) {
				t.Errorf("batch %d: %s", i, d)
			}
			if !array.RecordEqual(rec, got) {
				t.Errorf("batch %d: values differ:\nwant %v\ngot  %v", i, rec, got)
			}
			got.Release()
		}
	})
}

func TestGoldSchemaRoundTrip(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, _ := readGold(t, c+".stream")
			sch := offHeap[abi.Schema](t)
			if err := cdevice.ExportSchema(schema, sch); err != nil {
				t.Fatalf("export: %v", err)
			}
			got, err := cdevice.ImportSchema(sch)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if !sch.Released() {
				t.Error("ImportSchema left the struct unreleased")
			}
			for _, d := range schemaDiffs(schema, got) {
				t.Error(d)
			}
		})
	}
}

// forEachGoldBatchFormat runs f in a subtest per gold case and IPC format,
// with the file name to hand to readGold.
func forEachGoldBatchFormat(t *testing.T, f func(t *testing.T, name string)) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			for _, format := range goldFormats {
				t.Run(strings.TrimPrefix(format, "."), func(t *testing.T) { f(t, c+format) })
			}
		})
	}
}
