package async_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// The async benchmarks move asyncBenchBatches batches of asyncBenchRows
// rows of sample.StreamSchema (issue 5: 1000 batches of 4 columns × 64 rows).
const (
	asyncBenchBatches = 1000
	asyncBenchRows    = 64
)

// asyncBenchDeviceBatches builds n batches of rows rows of sample.StreamSchema
// on device.CPU, built once and released when the benchmark ends.
func asyncBenchDeviceBatches(tb testing.TB, n, rows int) []*cdevice.DeviceRecordBatch {
	tb.Helper()
	dbs := make([]*cdevice.DeviceRecordBatch, 0, n)
	tb.Cleanup(func() {
		for _, db := range dbs {
			db.Release()
		}
	})
	for _, rec := range sample.StreamBatches(nil, n, rows) {
		db, err := cdevice.CopyRecordBatchToDevice(context.Background(), rec, device.CPU)
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	return dbs
}

// retained is a Produce source over dbs that retains each batch as it
// yields it (Produce takes the yielded reference), so dbs can be streamed
// again and again.
func retained(dbs []*cdevice.DeviceRecordBatch) func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for _, db := range dbs {
			db.Retain()
			if !yield(db, nil) {
				return
			}
		}
	}
}

// reportBatchRate reports batches/s for a benchmark that moves perOp
// batches an iteration.
func reportBatchRate(b *testing.B, perOp int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(perOp)*float64(b.N)/s, "batches/s")
	}
}

// drainHandler reads h to the end, releasing every batch, and fails unless
// it held exactly want batches.
func drainHandler(b *testing.B, ctx context.Context, h *async.Handler, want int) {
	n := 0
	for {
		bt, err := h.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatalf("after %d batches: %v", n, err)
		}
		bt.Release()
		n++
	}
	if n != want {
		b.Fatalf("read %d batches, want %d", n, want)
	}
}

// BenchmarkAsync: 1000 batches of 4 columns × 64 rows on device.CPU from
// Produce to a Handler through the ABI, per iteration, at queue depths 1, 8
// and 64 (issue 5's target: at least 200,000 batches/s), with identity
// imports on, the library's default: the Handler takes back the batch that
// Produce exported. BenchmarkAsyncFullImport does the same with identity
// imports off, so that every batch takes the import path a C producer's
// batches take.
func BenchmarkAsync(b *testing.B) { benchAsync(b, true) }

func BenchmarkAsyncFullImport(b *testing.B) { benchAsync(b, false) }

func benchAsync(b *testing.B, on bool) {
	defer identity.Set(identity.Set(on))
	dbs := asyncBenchDeviceBatches(b, asyncBenchBatches, asyncBenchRows)
	for _, depth := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				h, err := async.NewHandler(async.WithQueueDepth(depth))
				if err != nil {
					b.Fatal(err)
				}
				errc := startProduce(ctx, sample.StreamSchema, retained(dbs), h.C())
				drainHandler(b, ctx, h, asyncBenchBatches)
				if err := <-errc; err != nil {
					b.Fatalf("Produce: %v", err)
				}
				if err := h.Close(ctx); err != nil {
					b.Fatalf("Close: %v", err)
				}
			}
			reportBatchRate(b, asyncBenchBatches)
		})
	}
}

// BenchmarkAsyncFromC: a Handler driven by the C producer of
// testdata/c/async.c (as_produce) from one pthread of its own, at queue
// depths 1, 8 and 64: 1000 batches of 64 rows per iteration (issue 5's
// target: at least 100,000 batches/s). as_produce makes its own batches:
// 2 columns (id int64, name utf8), not BenchmarkAsync's 4.
func BenchmarkAsyncFromC(b *testing.B) {
	if _, err := os.Stat(filepath.Join("..", "testdata", "c", "async.c")); err != nil {
		b.Skipf("the C async producer is not there yet: %v", err)
	}
	lib := ctest.Library(b, "async")
	for _, name := range []string{"as_produce", "as_wait", "as_reset", "as_problems", "as_problem_message"} {
		if _, err := lib.Symbol(name); err != nil {
			b.Skipf("testdata/c/async.c has no %s: %v", name, err)
		}
	}
	fn := func(name string) func(...uintptr) uintptr { return ctest.Func(b, lib, name) }
	produce, wait, problems := fn("as_produce"), fn("as_wait"), fn("as_problems")
	fn("as_reset")()
	b.Cleanup(func() {
		wait()
		if n := int64(problems()); n != 0 {
			b.Errorf("the C producer saw %d protocol breaches; the first: %s", n, ffi.GoString(fn("as_problem_message")()))
		}
	})
	for _, depth := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				h, err := async.NewHandler(async.WithQueueDepth(depth))
				if err != nil {
					b.Fatal(err)
				}
				// as_produce(h, batches, rows, threads, fail_at, schema_fail, device_type)
				args := []uintptr{uintptr(unsafe.Pointer(h.C()))}
				args = ffi.AppendUint64(args, asyncBenchBatches)
				args = ffi.AppendUint64(args, asyncBenchRows)
				args = append(args, 1)
				args = ffi.AppendUint64(args, ^uint64(0)) // fail_at -1: no failure
				args = append(args, 0)
				args = ffi.AppendUint64(args, uint64(abi.DeviceCPU))
				if rc := int32(produce(args...)); rc != 0 {
					b.Fatalf("as_produce = %d", rc)
				}
				drainHandler(b, ctx, h, asyncBenchBatches)
				if err := h.Close(ctx); err != nil {
					b.Fatalf("Close: %v", err)
				}
				wait() // join the producer thread, free its producer and tasks
			}
			reportBatchRate(b, asyncBenchBatches)
		})
	}
}
