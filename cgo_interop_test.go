//go:build cgo

// Interop with an independent implementation of the C Data Interface:
// arrow-go's cgo-based arrow/cdata. The library itself never imports it; CI
// runs these tests with CGO_ENABLED=1 go test -run Interop .

package cdevice_test

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

// Our abi structs and arrow-go's (C's own struct ArrowArray/ArrowSchema from
// abi.h) must be the same memory for the pointer conversions below.
func TestInteropStructSizes(t *testing.T) {
	if a, c := unsafe.Sizeof(abi.Array{}), unsafe.Sizeof(cdata.CArrowArray{}); a != c {
		t.Fatalf("abi.Array is %d bytes, struct ArrowArray %d", a, c)
	}
	if a, c := unsafe.Sizeof(abi.Schema{}), unsafe.Sizeof(cdata.CArrowSchema{}); a != c {
		t.Fatalf("abi.Schema is %d bytes, struct ArrowSchema %d", a, c)
	}
}

// interopStructs returns a zeroed ArrowArray and ArrowSchema in C heap memory
// (arrow-go's exporter requires zeroed C memory), seen both as our abi types
// and as arrow-go's.
func interopStructs(tb testing.TB) (*abi.Array, *abi.Schema, *cdata.CArrowArray, *cdata.CArrowSchema) {
	arr, sch := offHeap[abi.Array](tb), offHeap[abi.Schema](tb)
	return arr, sch, (*cdata.CArrowArray)(unsafe.Pointer(arr)), (*cdata.CArrowSchema)(unsafe.Pointer(sch))
}

// TestInteropExportToArrowGo: our export, arrow-go's import.
func TestInteropExportToArrowGo(t *testing.T) {
	forEachGoldBatchFormat(t, func(t *testing.T, name string) {
		schema, recs := readGold(t, name)
		arr, sch, carr, csch := interopStructs(t)
		for i, rec := range recs {
			if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
				t.Fatalf("batch %d: export: %v", i, err)
			}
			got, err := cdata.ImportCRecordBatch(carr, csch)
			if err != nil {
				// arrow-go leaves the array to us on error (it releases the schema).
				cdata.ReleaseCArrowArray(carr)
				cdata.ReleaseCArrowSchema(csch)
				t.Fatalf("batch %d: arrow-go import: %v", i, err)
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

// TestInteropImportFromArrowGo: arrow-go's export, our import.
func TestInteropImportFromArrowGo(t *testing.T) {
	forEachGoldBatchFormat(t, func(t *testing.T, name string) {
		schema, recs := readGold(t, name)
		arr, sch, carr, csch := interopStructs(t)
		for i, rec := range recs {
			cdata.ExportArrowRecordBatch(rec, carr, csch)
			got, err := cdevice.ImportRecordBatch(arr, sch)
			if err != nil {
				if !arr.Released() || !sch.Released() {
					t.Errorf("batch %d: a failed import left its input unreleased", i)
					cdata.ReleaseCArrowArray(carr)
					cdata.ReleaseCArrowSchema(csch)
				}
				t.Fatalf("batch %d: import: %v", i, err)
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

// TestInteropSchema: schemas both ways, for every case (no-batch ones too).
func TestInteropSchema(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, _ := readGold(t, c+".stream")
			_, sch, _, csch := interopStructs(t)

			if err := cdevice.ExportSchema(schema, sch); err != nil {
				t.Fatalf("export: %v", err)
			}
			got, err := cdata.ImportCArrowSchema(csch)
			if err != nil {
				t.Fatalf("arrow-go import: %v", err)
			}
			for _, d := range schemaDiffs(schema, got) {
				t.Errorf("ours → arrow-go: %s", d)
			}

			cdata.ExportArrowSchema(schema, csch)
			if got, err = cdevice.ImportSchema(sch); err != nil {
				t.Fatalf("import: %v", err)
			}
			for _, d := range schemaDiffs(schema, got) {
				t.Errorf("arrow-go → ours: %s", d)
			}
		})
	}
}
