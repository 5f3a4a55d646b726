package gpurttest

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/importtest"
	"github.com/purearrow/cdevice/stream"
)

// DeviceStreamTable is the cdevice bench command's ArrowDeviceArrayStream
// row (sample.WideBatch, copied to the first real device of rt once and
// sent again and again) per batch, ns/op and batches/s:
//
//   - Stream: the whole import of each batch through an
//     ArrowDeviceArrayStream, as C's structs are read (identity imports
//     off; BenchmarkDeviceStream);
//   - Go: the runtime calls of that import alone, through the binding
//     (BenchmarkSmallReads);
//   - C: the same calls by plain C code through the same library.
//
// Stream minus Go is the import's own work on the host; Go minus C is the
// binding's; C is the runtime's floor.
func DeviceStreamTable(b *testing.B, rt Runtime) {
	rec := sample.WideBatch()
	defer rec.Release()
	b.Run("Stream", func(b *testing.B) {
		d := RealDevices(b, rt)[0]
		info, _ := rt.Real.Probe(b.Context())
		BenchmarkDeviceStream(b, d, rec, info.Library)
	})
	BenchmarkSmallReads(b, rt, ValueReads(rec), 4)
}

// BenchmarkDeviceStream is the C path of the cdevice bench command's device
// stream: rec, copied to d once, sent b.N times through an
// ArrowDeviceArrayStream and imported as a C producer's structs are read
// (identity imports off), in batches/s. lib is d's runtime library: where
// it is a test double, each batch must have cost one round trip to the
// device and no copy into pageable memory.
func BenchmarkDeviceStream(b *testing.B, d device.Device, rec arrow.RecordBatch, lib string) {
	benchmarkImports(b, d, rec, lib, func(ctx context.Context, batches iter.Seq2[*cdevice.DeviceRecordBatch, error]) (iter.Seq2[*cdevice.DeviceRecordBatch, error], func() error) {
		s := cdevice.New[abi.DeviceArrayStream]()
		if err := stream.ExportDeviceStream(rec.Schema(), d.Type(), batches, s); err != nil {
			b.Fatal(err)
		}
		r, err := stream.ImportDeviceStream(s)
		if err != nil {
			b.Fatal(err)
		}
		return r.All(ctx), func() error { r.Release(); cdevice.Free(s); return nil }
	})
}

// BenchmarkAsyncDeviceStream is BenchmarkDeviceStream through the async
// interface: produced b.N times (async.Produce) to a Handler and imported
// by Next as a C producer's tasks; where lib is a double, with the round
// trips a batch cost (the Next that finds several tasks queued reads all
// their sizes in one).
func BenchmarkAsyncDeviceStream(b *testing.B, d device.Device, rec arrow.RecordBatch, lib string) {
	benchmarkImports(b, d, rec, lib, func(ctx context.Context, batches iter.Seq2[*cdevice.DeviceRecordBatch, error]) (iter.Seq2[*cdevice.DeviceRecordBatch, error], func() error) {
		h, err := async.NewHandler()
		if err != nil {
			b.Fatal(err)
		}
		produced := make(chan error, 1)
		go func() { produced <- async.Produce(ctx, rec.Schema(), d.Type(), async.Batches(batches), h.C()) }()
		all := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
			for bt, err := range h.All(ctx) {
				if !yield(bt.DeviceRecordBatch, err) {
					return
				}
			}
		}
		return all, func() error { return errors.Join(<-produced, h.Close(ctx)) }
	})
}

// benchmarkImports copies rec to d once, has imports send it b.N times
// through the interface measured and import every batch, and reports
// batches/s; where lib is a double, the round trips a batch cost too,
// which must be one at most, with no copy into pageable memory. The
// imports' end returns once everything they made is released.
func benchmarkImports(b *testing.B, d device.Device, rec arrow.RecordBatch, lib string,
	imports func(ctx context.Context, batches iter.Seq2[*cdevice.DeviceRecordBatch, error]) (iter.Seq2[*cdevice.DeviceRecordBatch, error], func() error)) {
	defer identity.Set(identity.Set(false))
	ctx := context.Background()
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, d)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Release()
	costs, double := CostsOf(lib)
	n := b.N
	var before Costs
	if double {
		before = costs()
	}
	b.ResetTimer()
	all, end := imports(ctx, importtest.Repeat(db, n))
	got := 0
	for _, err := range all {
		if err != nil {
			b.Fatal(err)
		}
		got++
	}
	b.StopTimer()
	if err := end(); err != nil {
		b.Fatal(err)
	}
	if got != n {
		b.Fatalf("%d batches, want %d", got, n)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "batches/s")
	if !double {
		return
	}
	c := costs().Minus(before)
	b.ReportMetric(float64(c.RoundTrips)/float64(n), "roundtrips/batch")
	if c.RoundTrips > int64(n) || c.PageableCopies != 0 {
		b.Errorf("%d batches cost %v; want a round trip each at most", n, c)
	}
}

// ValueReads is how many values importing rec on a device reads from it:
// the last offset of every binary and string array (their large forms;
// dictionaries' values included), which sizes its data, and each view
// array's variadic buffer sizes.
func ValueReads(rec arrow.RecordBatch) int {
	n := 0
	for _, c := range rec.Columns() {
		n += valueReads(c.Data())
	}
	return n
}

func valueReads(d arrow.ArrayData) int {
	n := 0
	switch d.DataType().ID() {
	case arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING:
		n = 1
	case arrow.BINARY_VIEW, arrow.STRING_VIEW:
		n = len(d.Buffers()) - 2 // the variadic buffers: a size each
	}
	for _, c := range d.Children() {
		n += valueReads(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += valueReads(d.Dictionary())
	}
	return n
}
