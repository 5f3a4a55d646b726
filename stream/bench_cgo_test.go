//go:build cgo

package stream_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/sample"
)

// BenchmarkArrowGoStream moves the stream of BenchmarkStream through
// arrow-go's cgo arrow/cdata (ExportRecordReader, ImportCRecordReader), so
// that both run side by side: CGO_ENABLED=1 go test -run XXX -bench Stream ./stream
func BenchmarkArrowGoStream(b *testing.B) {
	recs := makeBatches(b, nil, benchBatches, benchRows)
	s, cs := interopStream(b)
	b.ReportAllocs()
	for b.Loop() {
		rdr, err := array.NewRecordReader(sample.StreamSchema, recs)
		if err != nil {
			b.Fatal(err)
		}
		*s = abi.ArrayStream{}            // arrow-go's exporter wants zeroed memory
		cdata.ExportRecordReader(rdr, cs) // retains rdr
		rdr.Release()
		imp, err := cdata.ImportCRecordReader(cs, nil)
		if err != nil {
			b.Fatal(err)
		}
		r := imp.(array.RecordReader)
		n := 0
		for r.Next() {
			n++
		}
		err = r.Err()
		r.Release()
		if err != nil {
			b.Fatal(err)
		}
		if n != benchBatches {
			b.Fatalf("read %d batches, want %d", n, benchBatches)
		}
	}
	reportBatches(b, benchBatches)
}
