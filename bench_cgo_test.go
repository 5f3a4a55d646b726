//go:build cgo

package cdevice_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
)

// The same round trips as bench_test.go through arrow-go's cgo arrow/cdata,
// so that both run side by side: go test -run XXX -bench RoundTrip .

func benchArrowGoRoundTrip(b *testing.B, rec arrow.RecordBatch) {
	_, _, carr, csch := interopStructs(b)
	b.ReportAllocs()
	for b.Loop() {
		cdata.ExportArrowRecordBatch(rec, carr, csch)
		got, err := cdata.ImportCRecordBatch(carr, csch)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
	}
}

func BenchmarkArrowGoCdataRoundTripWide(b *testing.B) { benchArrowGoRoundTrip(b, wideBatch(b)) }

func BenchmarkArrowGoCdataRoundTripTall(b *testing.B) {
	benchArrowGoRoundTrip(b, tallBatch(b, 1_000_000))
}
