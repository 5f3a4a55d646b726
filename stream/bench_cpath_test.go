package stream_test

// BenchmarkCStreamWide: a C ArrowArrayStream (testdata/c/bench_peer.c through
// internal/benchpeer; the C side knows nothing of cdevice) of cstreamBatches
// batches of sample.WideBatch (16 columns × 1024 rows), each a fresh clone of
// one batch's struct tree (new structs, the same buffers), drained through
// ImportReader per iteration: the schema is imported once per stream. Its
// twin through arrow-go's cgo ImportCRecordReader, against the same C
// stream, is in bench_cpath_cgo_test.go; with the root package's C-path
// benchmarks:
//
//	CGO_ENABLED=1 go test -run XXX -bench 'CImport|CExport|CStream' -benchmem -count 5 . ./stream
//
// ns/batch is ns/op per batch. clone-ns/batch is the producer's own get_next
// and release work alone (clone and release a batch in C), measured right
// after the loop for as many batches; net-ns/batch is ns/batch less that: the
// importer's cost per batch beyond the producer's, the stream's schema and
// setup amortised over its batches. net-allocs/batch and net-B/batch leave
// out the harness's one foreign call per stream.

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/benchpeer"
	"github.com/purearrow/cdevice/stream"
)

// cstreamBatches is the number of batches of BenchmarkCStreamWide's streams.
const cstreamBatches = 1000

// readerFunc imports a C stream as a record reader.
type readerFunc func(s *abi.ArrayStream) (array.RecordReader, error)

func ourReader(s *abi.ArrayStream) (array.RecordReader, error) {
	r, err := stream.ImportReader(s)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func BenchmarkCStreamWide(b *testing.B) { benchCStream(b, ourReader) }

// benchCStream measures imp draining C streams of clones of
// sample.WideBatch, after checking once that a stream reads as that batch
// cstreamBatches times; at the end every clone and stream must have been
// released exactly once.
func benchCStream(b *testing.B, imp readerFunc) {
	rec := sample.WideBatch()
	defer rec.Release()
	p := benchpeer.Load(b)
	tpl := p.Template(b, rec)
	s := offHeap[abi.ArrayStream](b)
	before := p.Counters()

	if err := tpl.Stream(s, cstreamBatches); err != nil {
		b.Fatal(err)
	}
	r, err := imp(s)
	if err != nil {
		b.Fatalf("import: %v", err)
	}
	if !s.Released() {
		b.Fatal("the import did not move the stream")
	}
	for _, d := range schemaDiffs(rec.Schema(), r.Schema()) {
		b.Errorf("stream schema: %s", d)
	}
	n := 0
	for r.Next() {
		if !array.RecordEqual(rec, r.RecordBatch()) {
			b.Errorf("batch %d differs from the batch exported", n)
		}
		n++
	}
	err = r.Err()
	r.Release()
	if err != nil {
		b.Fatalf("after %d batches: %v", n, err)
	}
	if n != cstreamBatches {
		b.Fatalf("read %d batches, want %d", n, cstreamBatches)
	}
	if b.Failed() {
		b.FailNow()
	}
	p.CheckReleased(b, before, 1+cstreamBatches, 1)

	b.ReportAllocs()
	ops := 0
	m := benchpeer.StartMeter(b)
	for b.Loop() {
		if err := tpl.Stream(s, cstreamBatches); err != nil {
			b.Fatal(err)
		}
		drainC(b, s, imp)
		ops++
	}
	if ops > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*cstreamBatches), "ns/batch")
	}
	m.Report(ops, cstreamBatches, "batch", "clone", func(ops int) error {
		for range ops {
			if err := tpl.CloneReleaseArrays(cstreamBatches); err != nil {
				return err
			}
		}
		return nil
	})
	// Per stream: a schema and cstreamBatches arrays (the check's and the
	// loop's), and cstreamBatches arrays per op measuring the clone cost.
	p.CheckReleased(b, before, int64((1+ops)*(1+cstreamBatches)+ops*cstreamBatches), int64(1+ops))
}

// drainC imports s, reads it to the end and releases it, failing unless it
// held cstreamBatches batches.
func drainC(b *testing.B, s *abi.ArrayStream, imp readerFunc) {
	r, err := imp(s)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	var last arrow.RecordBatch
	for r.Next() {
		last = r.RecordBatch()
		n++
	}
	err = r.Err()
	r.Release()
	if err != nil {
		b.Fatal(err)
	}
	if n != cstreamBatches || last == nil {
		b.Fatalf("read %d batches, want %d", n, cstreamBatches)
	}
}
