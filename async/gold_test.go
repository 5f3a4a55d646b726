package async_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The shared gold-file and comparison helpers (internal/testsupport).
var (
	goldCases       = testsupport.GoldCases
	schemaDiffs     = testsupport.SchemaDiffs
	checkBatch      = testsupport.CheckBatch
	forEachIdentity = testsupport.ForEachIdentity
)

// readGold reads every batch of a gold case's .stream file.
func readGold(tb testing.TB, c string) (*arrow.Schema, []arrow.RecordBatch) {
	return testsupport.ReadGold(tb, c+".stream")
}

// copiedBatches is a Produce source: each record copied onto dev as it is
// pulled. Every yielded batch belongs to Produce.
func copiedBatches(ctx context.Context, recs []arrow.RecordBatch, dev device.Device) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for _, rec := range recs {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
			if !yield(db, err) || err != nil {
				return
			}
		}
	}
}

// batchMD is the task metadata {"batch": "<n>"}.
func batchMD(n int) arrow.Metadata {
	return arrow.NewMetadata([]string{"batch"}, []string{strconv.Itoa(n)})
}

// withTaskMetadata is a Produce source of seq's batches, batch n with task
// metadata md(n).
func withTaskMetadata(seq iter.Seq2[*cdevice.DeviceRecordBatch, error], md func(n int) arrow.Metadata) iter.Seq2[async.Batch, error] {
	return func(yield func(async.Batch, error) bool) {
		n := 0
		for db, err := range seq {
			if !yield(async.Batch{DeviceRecordBatch: db, Metadata: md(n)}, err) {
				return
			}
			n++
		}
	}
}

// startProduce runs Produce on its own goroutine over async.Batches(batches);
// its result arrives on the returned channel.
func startProduce(ctx context.Context, sc *arrow.Schema, batches iter.Seq2[*cdevice.DeviceRecordBatch, error],
	h *abi.AsyncDeviceStreamHandler, opts ...async.ProduceOption) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- async.Produce(ctx, sc, abi.DeviceCPU, async.Batches(batches), h, opts...) }()
	return errc
}

// waitProduce waits for Produce's result, failing the test after timeout.
func waitProduce(tb testing.TB, errc <-chan error, timeout time.Duration) error {
	tb.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(timeout):
		tb.Fatalf("Produce did not return within %v", timeout)
		return nil
	}
}

// waitDone fails the test unless h.Done() is closed within timeout.
func waitDone(tb testing.TB, h *async.Handler, timeout time.Duration) {
	tb.Helper()
	select {
	case <-h.Done():
	case <-time.After(timeout):
		tb.Fatalf("Done not closed within %v: the producer never released the handler", timeout)
	}
}

// closeHandler closes h (after the producer released it), failing the test
// on an error.
func closeHandler(tb testing.TB, h *async.Handler) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		tb.Errorf("Close: %v", err)
	}
}

// noLeaksAfter snapshots cdevice.LiveLeaks now; the returned check fails
// the test if, once finalizers of dropped values have had a moment to run,
// any counter is above the snapshot (what an earlier test left behind is
// not this test's leak). TestMain checks that everything is zero at the
// end.
func noLeaksAfter(tb testing.TB) func() {
	base := cdevice.LiveLeaks()
	return func() {
		tb.Helper()
		checkLeaks(tb, base)
	}
}

// checkLeaks fails the test unless no counter of cdevice.LiveLeaks is
// above base within half a second.
func checkLeaks(tb testing.TB, base cdevice.Leaks) {
	tb.Helper()
	var l cdevice.Leaks
	if settle.Eventually(func() bool {
		l = cdevice.LiveLeaks()
		return l.Exports() <= base.Exports() && l.Imports() <= base.Imports() && l.DeviceArrays <= base.DeviceArrays &&
			l.Handles <= base.Handles && l.CAllocations <= base.CAllocations && l.CallbackPanics <= base.CallbackPanics
	}) {
		return
	}
	tb.Errorf("leaks: %s (at most %s)", l, base)
}

// roundTrip streams recs (schema sc) from Produce to a Handler of queue
// depth depth through the ABI on device.CPU and checks that the consumer
// gets the same schema and batches, that Produce returns nil, that the
// handler is released, and that nothing leaks.
func roundTrip(t *testing.T, sc *arrow.Schema, recs []arrow.RecordBatch, depth int) {
	t.Helper()
	roundTripOn(t, sc, recs, depth, device.CPU)
}

// roundTripOn is roundTrip with the batches on dev.
func roundTripOn(t *testing.T, sc *arrow.Schema, recs []arrow.RecordBatch, depth int, dev device.Device) {
	t.Helper()
	t.Cleanup(noLeaksAfter(t)) // after the test's own cleanups
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := async.NewHandler(async.WithQueueDepth(depth))
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	errc := startProduce(ctx, sc, copiedBatches(ctx, recs, dev), h.C())
	closed := false
	defer func() {
		if !closed { // a failure part way: stop the producer and wait for it
			cancel()
			closeHandler(t, h)
		}
	}()

	got, err := h.Schema(ctx)
	if err != nil {
		t.Fatalf("Schema: %v", err)
	}
	for _, d := range schemaDiffs(sc, got) {
		t.Errorf("stream schema: %s", d)
	}
	n := 0
	for b, err := range h.All(ctx) {
		if err != nil {
			t.Fatalf("after %d batches: %v", n, err)
		}
		if b.DeviceRecordBatch == nil {
			t.Fatalf("batch %d: nil DeviceRecordBatch", n)
		}
		if dt := b.Device().Type(); dt != dev.Type() {
			t.Errorf("batch %d: device %s, want %s", n, dt, dev.Type())
		}
		rec, err := b.ToHost(ctx)
		if err != nil {
			t.Fatalf("batch %d: ToHost: %v", n, err)
		}
		if n < len(recs) {
			checkBatch(t, n, recs[n], rec)
		}
		rec.Release()
		n++
	}
	if n != len(recs) {
		t.Errorf("got %d batches, want %d", n, len(recs))
	}
	if _, err := h.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Next after the end: %v, want io.EOF", err)
	}
	if err := waitProduce(t, errc, 10*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 10*time.Second)
	closed = true
	closeHandler(t, h)
}

// Every gold case as an async stream round trip Go↔Go through the ABI, at
// queue depths 1 and 8: equal schema (metadata included) and batches.
func TestGoldAsync(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		for _, depth := range []int{1, 8} {
			t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
				for _, c := range goldCases(t) {
					t.Run(c, func(t *testing.T) {
						sc, recs := readGold(t, c)
						roundTrip(t, sc, recs, depth)
					})
				}
			})
		}
	})
}

// Every gold case as an async stream round trip on the devices of real
// runtimes: PoCL's OpenCL device, HIP's (chipStar on PoCL where configured).
// The consumer waits for each batch's sync event from the runtime.
func TestGoldAsyncDevices(t *testing.T) {
	for _, backend := range []string{"opencl", "hip"} {
		t.Run(backend, func(t *testing.T) {
			dev := testsupport.BackendDevice(t, backend)
			for _, c := range goldCases(t) {
				t.Run(c, func(t *testing.T) {
					sc, recs := readGold(t, c)
					roundTripOn(t, sc, recs, 8, dev)
				})
			}
		})
	}
}

// A stream of no batches: the schema, then the end.
func TestAsyncNoBatches(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, &arrow.Metadata{})
	empty := arrow.NewSchema(nil, nil)
	forEachIdentity(t, func(t *testing.T) {
		for _, depth := range []int{1, 8} {
			t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
				t.Run("two-fields", func(t *testing.T) { roundTrip(t, sc, nil, depth) })
				t.Run("no-fields", func(t *testing.T) { roundTrip(t, empty, nil, depth) })
			})
		}
	})
}

// Batches of zero rows, alone and between non-empty ones.
func TestAsyncZeroLength(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	build := func(rows int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("v", i))
			lb := b.Field(2).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		}
		return b.NewRecordBatch()
	}
	zero, three := build(0), build(3)
	defer zero.Release()
	defer three.Release()
	forEachIdentity(t, func(t *testing.T) {
		for _, depth := range []int{1, 8} {
			t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
				t.Run("one", func(t *testing.T) { roundTrip(t, sc, []arrow.RecordBatch{zero}, depth) })
				t.Run("mixed", func(t *testing.T) {
					roundTrip(t, sc, []arrow.RecordBatch{zero, three, zero, zero, three, zero}, depth)
				})
			})
		}
	})
}

// Additional metadata set on the producer reaches the handler.
func TestAsyncAdditionalMetadata(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	md := arrow.NewMetadata([]string{"rows", "batches"}, []string{"0", "0"})
	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	errc := startProduce(ctx, sc, copiedBatches(ctx, nil, device.CPU), h.C(), async.WithAdditionalMetadata(md))
	if _, err := h.Schema(ctx); err != nil {
		t.Fatalf("Schema: %v", err)
	}
	if got := h.AdditionalMetadata(); !got.Equal(md) {
		t.Errorf("AdditionalMetadata = %v, want %v", got, md)
	}
	if _, err := h.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Next: %v, want io.EOF", err)
	}
	if err := waitProduce(t, errc, 10*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 10*time.Second)
	closeHandler(t, h)
}

// Each batch's Metadata reaches the handler as its task's metadata (the
// metadata argument of on_next_task), several pairs, empty strings and
// non-ASCII included; a batch without any gets none.
func TestAsyncTaskMetadata(t *testing.T) {
	mds := []arrow.Metadata{
		arrow.NewMetadata([]string{"batch"}, []string{"0"}),
		{}, // none: on_next_task gets NULL
		arrow.NewMetadata([]string{"batch", "note", ""}, []string{"2", "größe ≠ Größe", ""}),
	}
	const batches, rows = 12, 3
	for _, depth := range []int{1, 8} {
		t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
			t.Cleanup(noLeaksAfter(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src := withTaskMetadata(acSource(ctx, batches, rows, nil), func(n int) arrow.Metadata { return mds[n%len(mds)] })
			h, err := async.NewHandler(async.WithQueueDepth(depth))
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() { errc <- async.Produce(ctx, acSchema, abi.DeviceCPU, src, h.C()) }()
			n := 0
			for b, err := range h.All(ctx) {
				if err != nil {
					t.Fatalf("after %d batches: %v", n, err)
				}
				if want := mds[n%len(mds)]; !b.Metadata.Equal(want) {
					t.Errorf("batch %d: task metadata %v, want %v", n, b.Metadata, want)
				}
				if b.Length != rows {
					t.Errorf("batch %d: %d rows, want %d", n, b.Length, rows)
				}
				n++
			}
			if n != batches {
				t.Errorf("got %d batches, want %d", n, batches)
			}
			if err := waitProduce(t, errc, 10*time.Second); err != nil {
				t.Errorf("Produce: %v", err)
			}
			waitDone(t, h, 10*time.Second)
			closeHandler(t, h)
		})
	}
}

// A handler in the caller's struct (WithHandlerStruct), driven by Go's
// Produce: C returns that struct, the stream arrives whole, and at release
// the struct reads released and stays the caller's, so it can take the
// next handler.
func TestHandlerStructGoProducer(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := cdevice.New[abi.AsyncDeviceStreamHandler]()
	defer cdevice.Free(hc)
	recs := []arrow.RecordBatch{acBatch(0, 2), acBatch(1, 0), acBatch(2, 5)}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for run := range 2 {
		h, err := async.NewHandler(async.WithQueueDepth(2), async.WithHandlerStruct(hc))
		if err != nil {
			t.Fatalf("run %d: NewHandler: %v", run, err)
		}
		if h.C() != hc {
			t.Fatalf("run %d: C() = %p, want the caller's struct %p", run, h.C(), hc)
		}
		if hc.Release == 0 || hc.PrivateData == 0 || hc.OnSchema == 0 || hc.OnNextTask == 0 || hc.OnError == 0 {
			t.Fatalf("run %d: the caller's struct was not filled: %+v", run, *hc)
		}
		errc := startProduce(ctx, acSchema, copiedBatches(ctx, recs, device.CPU), hc)
		n := 0
		for b, err := range h.All(ctx) {
			if err != nil {
				t.Fatalf("run %d: after %d batches: %v", run, n, err)
			}
			rec, err := b.ToHost(ctx)
			if err != nil {
				t.Fatalf("run %d: batch %d: ToHost: %v", run, n, err)
			}
			if n < len(recs) {
				checkBatch(t, n, recs[n], rec)
			}
			rec.Release()
			n++
		}
		if n != len(recs) {
			t.Errorf("run %d: got %d batches, want %d", run, n, len(recs))
		}
		if err := waitProduce(t, errc, 10*time.Second); err != nil {
			t.Errorf("run %d: Produce: %v", run, err)
		}
		waitDone(t, h, 10*time.Second)
		if hc.Release != 0 || hc.PrivateData != 0 {
			t.Errorf("run %d: after release the struct reads release %#x, private_data %#x; want 0, 0", run, hc.Release, hc.PrivateData)
		}
		closeHandler(t, h)
	}
}

// Close frees everything the handler holds, at once: with the Handler still
// in reach (so no garbage-collector cleanup can have run), the counters are
// back where they were before NewHandler.
func TestHandlerCloseFreesAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 3 { // what earlier tests dropped goes first
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	base := cdevice.LiveLeaks()
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	errc := startProduce(ctx, sc, copiedBatches(ctx, nil, device.CPU), h.C())
	if _, err := h.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Next: %v, want io.EOF", err)
	}
	if err := waitProduce(t, errc, 5*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 5*time.Second)
	closeHandler(t, h)
	l := cdevice.LiveLeaks()
	runtime.KeepAlive(h)
	if l.CAllocations > base.CAllocations || l.Handles > base.Handles {
		t.Errorf("after Close: %s; before NewHandler: %s (Close must free the handler's C memory, not leave it to the garbage collector)", l, base)
	}
}

// NextHost hands each CPU batch over in host memory, with its task
// metadata, and a batch kept past the end of the stream stays valid until
// released (the producer's export lives as long as it).
func TestHandlerNextHost(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const batches, rows = 5, 4
	src := withTaskMetadata(acSource(ctx, batches, rows, nil), batchMD)
	h, err := async.NewHandler(async.WithQueueDepth(2))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- async.Produce(ctx, acSchema, abi.DeviceCPU, src, h.C()) }()
	var kept []arrow.RecordBatch
	for n := 0; ; n++ {
		rec, md, err := h.NextHost(ctx)
		if err == io.EOF {
			if n != batches {
				t.Errorf("%d batches, want %d", n, batches)
			}
			break
		}
		if err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		want := acBatch(n, rows)
		if !array.RecordEqual(rec, want) {
			t.Errorf("batch %d:\n got %v\nwant %v", n, rec, want)
		}
		want.Release()
		if v, ok := md.GetValue("batch"); !ok || v != fmt.Sprint(n) {
			t.Errorf("batch %d: task metadata %v", n, md)
		}
		kept = append(kept, rec)
	}
	if err := waitProduce(t, errc, 10*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 10*time.Second)
	for i, rec := range kept { // after the handler's release
		want := acBatch(i, rows)
		if !array.RecordEqual(rec, want) {
			t.Errorf("kept batch %d changed after the stream ended", i)
		}
		want.Release()
		rec.Release()
	}
	closeHandler(t, h)
}
