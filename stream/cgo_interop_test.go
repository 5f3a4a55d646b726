//go:build cgo

// Stream interop with an independent implementation of the C Stream
// Interface: arrow-go's cgo-based arrow/cdata. CI runs these tests with
// CGO_ENABLED=1 go test -run Interop ./stream

package stream_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/stream"
)

// Our abi.ArrayStream and arrow-go's (C's own struct ArrowArrayStream) must
// be the same memory for the pointer conversions below.
func TestInteropStreamStructSize(t *testing.T) {
	if a, c := unsafe.Sizeof(abi.ArrayStream{}), unsafe.Sizeof(cdata.CArrowArrayStream{}); a != c {
		t.Fatalf("abi.ArrayStream is %d bytes, struct ArrowArrayStream %d", a, c)
	}
}

// interopStream returns a zeroed ArrowArrayStream in C heap memory
// (arrow-go's exporter requires zeroed C memory), seen both as our abi type
// and as arrow-go's.
func interopStream(tb testing.TB) (*abi.ArrayStream, *cdata.CArrowArrayStream) {
	s := offHeap[abi.ArrayStream](tb)
	return s, (*cdata.CArrowArrayStream)(unsafe.Pointer(s))
}

// TestInteropStreamToArrowGo: every gold case, our ExportReader, arrow-go's
// ImportCRecordReader.
func TestInteropStreamToArrowGo(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, want := readGold(t, c)
			src := openGold(t, c, goldAllocator(t))
			s, cs := interopStream(t)
			err := stream.ExportReader(src, s)
			src.Release()
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			r, err := arrowGoImport(cs)
			if err != nil {
				t.Fatalf("arrow-go import: %v", err)
			}
			defer r.Release()
			if !s.Released() {
				t.Error("arrow-go did not move the stream out of our struct")
			}
			for _, d := range schemaDiffs(schema, r.Schema()) {
				t.Errorf("stream schema: %s", d)
			}
			n := 0
			for r.Next() {
				if n < len(want) {
					checkBatch(t, n, want[n], r.RecordBatch())
				}
				n++
			}
			if err := r.Err(); err != nil {
				t.Fatalf("after %d batches: %v", n, err)
			}
			if n != len(want) {
				t.Errorf("got %d batches, want %d", n, len(want))
			}
		})
	}
}

// TestInteropStreamFromArrowGo: every gold case, arrow-go's
// ExportRecordReader, our ImportReader.
func TestInteropStreamFromArrowGo(t *testing.T) {
	for _, c := range goldCases(t) {
		t.Run(c, func(t *testing.T) {
			schema, want := readGold(t, c)
			src := openGold(t, c, goldAllocator(t))
			s, cs := interopStream(t)
			cdata.ExportRecordReader(src, cs) // retains src
			src.Release()
			r, err := stream.ImportReader(s)
			if err != nil {
				if !s.Released() {
					cdata.ReleaseCArrowArrayStream(cs)
				}
				t.Fatalf("import: %v", err)
			}
			drainGold(t, r, schema, want)
			if !s.Released() {
				t.Error("releasing the Reader did not release arrow-go's stream")
			}
		})
	}
}

// arrowGoImport is cdata.ImportCRecordReader, with a panic inside arrow-go
// (a cgocheck failure) turned into an error so that the other cases run.
// The reader keeps the batches it hands out.
func arrowGoImport(cs *cdata.CArrowArrayStream) (r array.RecordReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("arrow-go panicked: %v", p)
		}
	}()
	rdr, err := cdata.ImportCRecordReader(cs, nil)
	if err != nil {
		return nil, err
	}
	return rdr.(array.RecordReader), nil
}
