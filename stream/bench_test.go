package stream_test

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/stream"
)

// The stream benchmarks move benchBatches batches of benchRows rows.
const (
	benchBatches = 1000
	benchRows    = 64
)

// makeBatches builds n batches of rows rows of sample.StreamSchema with memory from
// mem (nil: the default allocator), released when the test or benchmark
// ends.
func makeBatches(tb testing.TB, mem memory.Allocator, n, rows int) []arrow.RecordBatch {
	recs := sample.StreamBatches(mem, n, rows)
	tb.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return recs
}

// BenchmarkStream: 1000 batches of 4 columns × 64 rows exported as an
// ArrowArrayStream and drained through ImportReader, per iteration.
// BenchmarkStreamFullImport does the same with identity imports off, so
// that every batch takes the path a C producer's batches take.
func BenchmarkStream(b *testing.B) { benchStream(b, true) }

func BenchmarkStreamFullImport(b *testing.B) { benchStream(b, false) }

func benchStream(b *testing.B, on bool) {
	defer identity.Set(identity.Set(on))
	recs := makeBatches(b, nil, benchBatches, benchRows)
	s := offHeap[abi.ArrayStream](b)
	b.ReportAllocs()
	for b.Loop() {
		rdr, err := array.NewRecordReader(sample.StreamSchema, recs)
		if err != nil {
			b.Fatal(err)
		}
		err = stream.ExportReader(rdr, s)
		rdr.Release() // the export holds its own reference
		if err != nil {
			b.Fatal(err)
		}
		drain(b, s, benchBatches)
	}
	reportBatches(b, benchBatches)
}

// drain imports s, reads it to the end and releases it, failing unless it
// held exactly want batches.
func drain(b *testing.B, s *abi.ArrayStream, want int) {
	r, err := stream.ImportReader(s)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for r.Next() {
		n++
	}
	err = r.Err()
	r.Release()
	if err != nil {
		b.Fatal(err)
	}
	if n != want {
		b.Fatalf("read %d batches, want %d", n, want)
	}
}

// reportBatches reports batches/s for a benchmark that moves perOp batches
// an iteration.
func reportBatches(b *testing.B, perOp int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(perOp)*float64(b.N)/s, "batches/s")
	}
}

// BenchmarkStreamFromC: ImportReader draining a C producer
// (testdata/c/stream.c) of 1000 batches of 64 rows.
func BenchmarkStreamFromC(b *testing.B) {
	if _, err := os.Stat(filepath.Join("..", "testdata", "c", "stream.c")); err != nil {
		b.Skipf("the C stream producer is not there yet: %v", err)
	}
	lib := ctest.Library(b, "stream")
	makeStream, err := lib.Symbol("st_make_stream")
	if err != nil {
		b.Skipf("testdata/c/stream.c has no st_make_stream: %v", err)
	}
	s := offHeap[abi.ArrayStream](b)
	never := ^uintptr(0) // fail_at = -1: no failure
	b.ReportAllocs()
	for b.Loop() {
		// st_make_stream(out, batches, rows, fail_schema, fail_at, empty)
		if rc := int32(ffi.Call(makeStream, uintptr(unsafe.Pointer(s)), benchBatches, benchRows, 0, never, 0)); rc != 0 {
			b.Fatalf("st_make_stream = %d", rc)
		}
		drain(b, s, benchBatches)
	}
	reportBatches(b, benchBatches)
}

// The benchmarks' batches survive the stream they are measured through.
func TestStreamBenchBatches(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		recs := makeBatches(t, nil, 20, benchRows)
		rdr, err := array.NewRecordReader(sample.StreamSchema, recs)
		if err != nil {
			t.Fatal(err)
		}
		s := offHeap[abi.ArrayStream](t)
		err = stream.ExportReader(rdr, s)
		rdr.Release()
		if err != nil {
			t.Fatal(err)
		}
		r, err := stream.ImportReader(s)
		if err != nil {
			t.Fatal(err)
		}
		drainGold(t, r, sample.StreamSchema, recs)
	})
}
