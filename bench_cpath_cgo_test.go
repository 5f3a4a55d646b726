//go:build cgo

package cdevice_test

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice/abi"
)

// The C-path benchmarks of bench_cpath_test.go through arrow-go's cgo
// arrow/cdata, with the same C producer and consumer, so that both run side
// by side:
//
//	CGO_ENABLED=1 go test -run XXX -bench 'CImport|CExport|CStream' -benchmem -count 5 . ./stream
//
// (arrow-go's exporter stores unpinned Go pointers in C memory, so the
// ArrowGoCExport benchmarks die under GOEXPERIMENT=cgocheck2.)

func arrowGoImport(arr *abi.Array, sch *abi.Schema) (arrow.RecordBatch, error) {
	carr := (*cdata.CArrowArray)(unsafe.Pointer(arr))
	rec, err := cdata.ImportCRecordBatch(carr, (*cdata.CArrowSchema)(unsafe.Pointer(sch)))
	if err != nil && !arr.Released() {
		cdata.ReleaseCArrowArray(carr) // arrow-go leaves the array to us on error
	}
	return rec, err
}

func arrowGoExport(rec arrow.RecordBatch, arr *abi.Array, sch *abi.Schema) error {
	cdata.ExportArrowRecordBatch(rec, (*cdata.CArrowArray)(unsafe.Pointer(arr)), (*cdata.CArrowSchema)(unsafe.Pointer(sch)))
	return nil
}

func BenchmarkArrowGoCImportWide(b *testing.B) { benchCImport(b, wideBatch(b), arrowGoImport) }

func BenchmarkArrowGoCImportTall(b *testing.B) {
	benchCImport(b, tallBatch(b, tallRows), arrowGoImport)
}

func BenchmarkArrowGoCExportWide(b *testing.B) { benchCExport(b, wideBatch(b), arrowGoExport) }

func BenchmarkArrowGoCExportTall(b *testing.B) {
	benchCExport(b, tallBatch(b, tallRows), arrowGoExport)
}
