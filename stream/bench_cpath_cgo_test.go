//go:build cgo

package stream_test

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice/abi"
)

// BenchmarkArrowGoCStreamWide is BenchmarkCStreamWide (bench_cpath_test.go)
// through arrow-go's cgo ImportCRecordReader, against the same C stream, so
// that both run side by side:
//
//	CGO_ENABLED=1 go test -run XXX -bench 'CImport|CExport|CStream' -benchmem -count 5 . ./stream
func BenchmarkArrowGoCStreamWide(b *testing.B) { benchCStream(b, arrowGoReader) }

func arrowGoReader(s *abi.ArrayStream) (array.RecordReader, error) {
	rdr, err := cdata.ImportCRecordReader((*cdata.CArrowArrayStream)(unsafe.Pointer(s)), nil)
	if err != nil {
		return nil, err
	}
	return rdr.(array.RecordReader), nil
}
