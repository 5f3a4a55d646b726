// Regression tests for the three failures found in arrow-go v18.8.0's async
// code (issue 5), and protocol tests that drive a Handler from a
// hand-written producer. The no-spin tests read the goroutines' states, not
// a clock.

package async_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

// ---- a hand-written producer and a release gate ----
//
// purego has 2000 callback slots for the whole process and never frees
// them, so the test-only C callbacks are these four, declared once: a
// producer's request and cancel, a task's extract_data, and a gate in front
// of a handler's release. Each finds its state by the struct's address.

// A fakeProducer is an ArrowAsyncProducer in C memory whose request and
// cancel only record what the handler asked for.
type fakeProducer struct {
	p            *abi.AsyncProducer
	granted      atomic.Int64  // sum of n over valid requests
	requests     atomic.Int64  // request calls
	invalid      atomic.Int64  // requests with n <= 0
	cancels      atomic.Int64  // cancel calls
	released     atomic.Bool   // the test called the handler's release
	afterRelease atomic.Int64  // producer calls after that
	signal       chan struct{} // a token per request

	// errorInCancel: cancel calls handler->on_error(EIO) before it returns,
	// as the spec allows ("any error encountered during handling a call to
	// cancel must be reported via the on_error callback").
	errorInCancel *abi.AsyncDeviceStreamHandler
}

var fakeProducers sync.Map // uintptr(*abi.AsyncProducer) → *fakeProducer

// newFakeProducer allocates a producer of device type CPU, freed when the
// test ends.
func newFakeProducer(tb testing.TB) *fakeProducer {
	f := &fakeProducer{p: cdevice.New[abi.AsyncProducer](), signal: make(chan struct{}, 1<<16)}
	f.p.DeviceType = abi.DeviceCPU
	f.p.Request = fakeRequestCB.Ptr()
	f.p.Cancel = fakeCancelCB.Ptr()
	key := uintptr(unsafe.Pointer(f.p))
	fakeProducers.Store(key, f)
	tb.Cleanup(func() {
		fakeProducers.Delete(key)
		cdevice.Free(f.p)
	})
	return f
}

func fakeProducerAt(p uintptr) *fakeProducer {
	v, _ := fakeProducers.Load(p)
	f, _ := v.(*fakeProducer)
	return f
}

// waitGranted waits until the handler has requested at least n tasks in
// all.
func (f *fakeProducer) waitGranted(ctx context.Context, n int64) error {
	for f.granted.Load() < n {
		select {
		case <-f.signal:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a request of task %d (granted %d): %w", n, f.granted.Load(), ctx.Err())
		}
	}
	return nil
}

// void request(struct ArrowAsyncProducer*, int64_t n): n is read as C passes
// it on every target (two words on 32-bit ones).
var fakeRequestCB = ffi.NewCallback4("test producer request", func(self, a, b, c uintptr) uintptr {
	f := fakeProducerAt(self)
	if f == nil {
		return 0
	}
	n := int64(ffi.Uint64Arg([]uintptr{self, a, b, c}, 1))
	if f.released.Load() {
		f.afterRelease.Add(1)
	}
	f.requests.Add(1)
	if n <= 0 {
		f.invalid.Add(1)
	} else {
		f.granted.Add(n)
	}
	select {
	case f.signal <- struct{}{}:
	default:
	}
	return 0
})

var fakeCancelCB = ffi.NewCallback1("test producer cancel", func(self uintptr) uintptr {
	if f := fakeProducerAt(self); f != nil {
		if f.released.Load() {
			f.afterRelease.Add(1)
		}
		f.cancels.Add(1)
		if hc := f.errorInCancel; hc != nil && f.cancels.Load() == 1 {
			ffi.Call(hc.OnError, uintptr(unsafe.Pointer(hc)), 5, uintptr(unsafe.Pointer(unsafe.StringData("cancel failed\x00"))), 0)
		}
	}
	return 0
})

// A fakeTask is the batch behind one ArrowAsyncTask of a hand-written
// producer; extract_data exports it (or drops it for a NULL out).
type fakeTask struct {
	batch     *cdevice.DeviceRecordBatch
	extracted atomic.Int64
	discarded atomic.Int64
}

var (
	fakeTasks      sync.Map // task id (private_data) → *fakeTask
	fakeTaskID     atomic.Uintptr
	strayExtracts  atomic.Int64 // extract_data of a task that is gone or unknown
	fakeExtractErr atomic.Int64 // exports that failed
)

// int extract_data(struct ArrowAsyncTask*, struct ArrowDeviceArray* out)
var fakeExtractCB = ffi.NewCallback2("test task extract_data", func(task, out uintptr) uintptr {
	t := (*abi.AsyncTask)(abi.Pointer(task))
	v, ok := fakeTasks.LoadAndDelete(t.PrivateData)
	if !ok {
		strayExtracts.Add(1)
		return 22 // EINVAL
	}
	ft := v.(*fakeTask)
	defer ft.batch.Release()
	if out == 0 {
		ft.discarded.Add(1)
		return 0
	}
	ft.extracted.Add(1)
	if err := ft.batch.Export((*abi.DeviceArray)(abi.Pointer(out)), nil); err != nil {
		fakeExtractErr.Add(1)
		return 5 // EIO
	}
	return 0
})

// sendTask calls the handler's on_next_task with a task for b (whose
// reference the task takes) and md as the task's metadata; the task struct
// and the metadata are C memory that is overwritten and freed as soon as
// the call returns, as the spec allows.
func sendTask(tb testing.TB, hc *abi.AsyncDeviceStreamHandler, b *cdevice.DeviceRecordBatch, md arrow.Metadata) (*fakeTask, int32) {
	tb.Helper()
	ft := &fakeTask{batch: b}
	id := fakeTaskID.Add(1)
	fakeTasks.Store(id, ft)
	task := cdevice.New[abi.AsyncTask]()
	defer cdevice.Free(task)
	task.ExtractData = fakeExtractCB.Ptr()
	task.PrivateData = id
	var mdp unsafe.Pointer
	if enc := cmeta.Encode(md); len(enc) > 0 {
		p, err := ffi.Calloc(uintptr(len(enc)))
		if err != nil {
			tb.Fatal(err)
		}
		copy(unsafe.Slice((*byte)(p), len(enc)), enc)
		mdp = p
		defer func() {
			clear(unsafe.Slice((*byte)(p), len(enc)))
			ffi.Free(p)
		}()
	}
	rc := int32(ffi.Call(hc.OnNextTask, uintptr(unsafe.Pointer(hc)), uintptr(unsafe.Pointer(task)), uintptr(mdp)))
	task.PrivateData = ^uintptr(0) // a handler that kept the pointer gets a stray extract
	return ft, rc
}

// A releaseGate stands in front of a handler's release: the producer's call
// waits until the test opens the gate, then the real release runs.
type releaseGate struct {
	real    uintptr
	entered chan struct{}
	open    chan struct{}
}

var releaseGates sync.Map // uintptr(*abi.AsyncDeviceStreamHandler) → *releaseGate

var gateReleaseCB = ffi.NewCallback1("test handler release gate", func(self uintptr) uintptr {
	v, ok := releaseGates.LoadAndDelete(self)
	if !ok {
		return 0
	}
	g := v.(*releaseGate)
	close(g.entered)
	select {
	case <-g.open:
	case <-time.After(30 * time.Second):
	}
	ffi.Call1(g.real, self)
	return 0
})

// gateRelease puts a gate in front of hc's release.
func gateRelease(hc *abi.AsyncDeviceStreamHandler) *releaseGate {
	g := &releaseGate{real: hc.Release, entered: make(chan struct{}), open: make(chan struct{})}
	releaseGates.Store(uintptr(unsafe.Pointer(hc)), g)
	hc.Release = gateReleaseCB.Ptr()
	return g
}

// callRequest calls producer->request(producer, n) as a C consumer does.
func callRequest(p *abi.AsyncProducer, n int64) {
	self := uintptr(unsafe.Pointer(p))
	ffi.Call(p.Request, ffi.AppendUint64([]uintptr{self}, uint64(n))...)
}

// exportedSchema exports sc into C memory freed when the test ends.
func exportedSchema(tb testing.TB, sc *arrow.Schema) *abi.Schema {
	tb.Helper()
	s := cdevice.New[abi.Schema]()
	tb.Cleanup(func() {
		if s.Release != 0 {
			ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
		}
		cdevice.Free(s)
	})
	if err := cdevice.ExportSchema(sc, s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// callOnSchema calls hc's on_schema with s as a producer does.
func callOnSchema(hc *abi.AsyncDeviceStreamHandler, s *abi.Schema) int32 {
	return int32(ffi.Call(hc.OnSchema, uintptr(unsafe.Pointer(hc)), uintptr(unsafe.Pointer(s))))
}

// regressSchema and regressBatches: a small stream for these tests.
var regressSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func regressBatches(tb testing.TB, n int) []arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, regressSchema)
	defer b.Release()
	recs := make([]arrow.RecordBatch, n)
	for i := range recs {
		for j := range 4 {
			b.Field(0).(*array.Int64Builder).Append(int64(i*4 + j))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("row ", i*4+j))
		}
		recs[i] = b.NewRecordBatch()
	}
	tb.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return recs
}

// failOnCallbackPanics fails t, when it ends, if a callback panicked
// during it.
func failOnCallbackPanics(t *testing.T) {
	before := cdevice.LiveLeaks().CallbackPanics
	t.Cleanup(func() {
		if cdevice.LiveLeaks().CallbackPanics != before {
			_, msg := ffi.Panics()
			t.Errorf("a callback panicked: %s", msg)
		}
	})
}

// checkNoCallsAfterRelease fails t if the handler called the producer
// after its release.
func (f *fakeProducer) checkNoCallsAfterRelease(t *testing.T) {
	t.Helper()
	if n := f.afterRelease.Load(); n != 0 {
		t.Errorf("the handler called the producer %d times after its release", n)
	}
}

// ---- (1) a handler released after on_schema returned an error ----

// arrow-go v18.8.0 crashed when the producer released a handler whose
// on_schema had failed. Here a hand-written producer hands our Handler
// schemas it must reject, gets non-zero, and does the only thing left to
// it: release. Nothing may crash or panic, Schema and Next report an error,
// Done is closed, the handler calls nothing of the producer after release,
// and nothing leaks.
func TestRegressReleaseAfterRejectedSchema(t *testing.T) {
	cases := []struct {
		name   string
		schema func(t *testing.T) *abi.Schema
	}{
		{"format Q", func(t *testing.T) *abi.Schema {
			s := exportedSchema(t, regressSchema)
			q, err := ffi.CString("Q") // not an Arrow format
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ffi.Free(q) })
			s.Format = uintptr(q) // the export's release does not free format
			return s
		}},
		{"released schema", func(t *testing.T) *abi.Schema {
			s := exportedSchema(t, regressSchema)
			ffi.Call1(s.Release, uintptr(unsafe.Pointer(s)))
			return s
		}},
		{"NULL schema", func(t *testing.T) *abi.Schema { return nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The identity import shortcut would skip the parse of an
			// untouched export; these schemas must be parsed.
			defer identity.Set(identity.Set(false))
			failOnCallbackPanics(t)
			t.Cleanup(noLeaksAfter(t)) // after the test's own C memory is freed
			h, err := async.NewHandler()
			if err != nil {
				t.Fatal(err)
			}
			hc := h.C()
			f := newFakeProducer(t)
			hc.Producer = uintptr(unsafe.Pointer(f.p))
			s := c.schema(t)

			if rc := callOnSchema(hc, s); rc == 0 {
				t.Errorf("on_schema accepted a schema it must reject")
			}
			if s != nil && s.Release != 0 {
				t.Errorf("on_schema left the schema unreleased: the handler owns it")
			}
			f.released.Store(true)
			ffi.Call1(hc.Release, uintptr(unsafe.Pointer(hc)))
			waitDone(t, h, 5*time.Second)

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if sc, err := h.Schema(ctx); err == nil {
				t.Errorf("Schema after a rejected schema: %v, nil error", sc)
			}
			if b, err := h.Next(ctx); err == nil || errors.Is(err, io.EOF) {
				if err == nil {
					b.Release()
				}
				t.Errorf("Next after a rejected schema: %v, want an error other than io.EOF", err)
			}
			h.Cancel() // after release: a no-op that must not reach the producer
			h.Cancel()
			closeHandler(t, h)
			f.checkNoCallsAfterRelease(t)
			if n := f.granted.Load(); n != 0 {
				t.Errorf("the handler requested %d tasks after rejecting the schema", n)
			}
		})
	}
}

// ---- (2) request() after the last batch ----

// arrow-go v18.8.0 touched freed memory when the consumer called request()
// after the last batch. A Handler drains Produce to io.EOF; then, while
// Produce is held inside the handler's release (a gate in front of it, so
// the producer struct is certain to be alive), the test calls request and
// cancel on the producer. Produce must ignore them, return nil and release
// once.
func TestRegressRequestAfterLastBatch(t *testing.T) {
	for _, depth := range []int{1, 8} {
		for _, nb := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("depth=%d/batches=%d", depth, nb), func(t *testing.T) {
				failOnCallbackPanics(t)
				t.Cleanup(noLeaksAfter(t)) // after the test's own C memory is freed
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				recs := regressBatches(t, nb)
				h, err := async.NewHandler(async.WithQueueDepth(depth))
				if err != nil {
					t.Fatal(err)
				}
				hc := h.C()
				gate := gateRelease(hc)
				errc := startProduce(ctx, regressSchema, copiedBatches(ctx, recs, device.CPU), hc)

				n := 0
				for b, err := range h.All(ctx) {
					if err != nil {
						t.Fatalf("after %d batches: %v", n, err)
					}
					n++
					_ = b
				}
				if n != nb {
					t.Errorf("got %d batches, want %d", n, nb)
				}
				// After io.EOF, before Done: the release may not have
				// begun yet (racing Produce) ...
				p := (*abi.AsyncProducer)(abi.Pointer(hc.Producer))
				if p == nil {
					t.Fatal("handler->producer is NULL after the stream ended")
				}
				callRequest(p, 1)
				// ... or Produce is inside it.
				select {
				case <-gate.entered:
				case <-time.After(10 * time.Second):
					t.Fatal("Produce never called release")
				}
				select {
				case <-h.Done():
					t.Fatal("Done closed while the release was held")
				default:
				}
				callRequest(p, 1)
				callRequest(p, 64)
				ffi.Call1(p.Cancel, uintptr(unsafe.Pointer(p)))
				ffi.Call1(p.Cancel, uintptr(unsafe.Pointer(p)))
				close(gate.open)

				if err := waitProduce(t, errc, 10*time.Second); err != nil {
					t.Errorf("Produce: %v", err)
				}
				waitDone(t, h, 5*time.Second)
				if _, err := h.Next(ctx); !errors.Is(err, io.EOF) {
					t.Errorf("Next after the end and a late request: %v, want io.EOF", err)
				}
				closeHandler(t, h)
			})
		}
	}
}

// The other side of (2): our Handler itself never calls request (or
// anything else of the producer) once it has seen the end. A hand-written
// producer counts the requests; it sends a task only when one is
// requested, with metadata on some, and checks that each task is extracted
// exactly once and that no more than the queue depth is ever outstanding.
func TestRegressHandlerNoRequestAfterEnd(t *testing.T) {
	for _, depth := range []int{1, 8} {
		for _, nb := range []int{0, 1, 5, 20} {
			t.Run(fmt.Sprintf("depth=%d/batches=%d", depth, nb), func(t *testing.T) {
				failOnCallbackPanics(t)
				t.Cleanup(noLeaksAfter(t)) // after the test's own C memory is freed
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				recs := regressBatches(t, nb)
				h, err := async.NewHandler(async.WithQueueDepth(depth))
				if err != nil {
					t.Fatal(err)
				}
				hc := h.C()
				f := newFakeProducer(t)
				hc.Producer = uintptr(unsafe.Pointer(f.p))
				if rc := callOnSchema(hc, exportedSchema(t, regressSchema)); rc != 0 {
					t.Fatalf("on_schema = %d", rc)
				}

				type result struct {
					n   int
					mds []arrow.Metadata
					err error
				}
				done := make(chan result, 1)
				go func() {
					var r result
					for {
						b, err := h.Next(ctx)
						if err != nil {
							r.err = err
							done <- r
							return
						}
						if b.Length != recs[r.n].NumRows() {
							r.err = fmt.Errorf("batch %d: %d rows, want %d", r.n, b.Length, recs[r.n].NumRows())
						}
						r.mds = append(r.mds, b.Metadata)
						b.Release()
						r.n++
					}
				}()

				var tasks []*fakeTask
				var mds []arrow.Metadata
				for i, rec := range recs {
					if err := f.waitGranted(ctx, int64(i+1)); err != nil {
						t.Fatal(err)
					}
					if out := f.granted.Load() - int64(i); out > int64(depth) {
						t.Errorf("task %d: %d tasks outstanding, queue depth %d", i, out, depth)
					}
					db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
					if err != nil {
						t.Fatal(err)
					}
					var md arrow.Metadata
					if i%2 == 1 {
						md = arrow.NewMetadata([]string{"task"}, []string{fmt.Sprint(i)})
					}
					mds = append(mds, md)
					ft, rc := sendTask(t, hc, db, md)
					if rc != 0 {
						t.Fatalf("on_next_task(%d) = %d", i, rc)
					}
					tasks = append(tasks, ft)
				}
				if rc := int32(ffi.Call(hc.OnNextTask, uintptr(unsafe.Pointer(hc)), 0, 0)); rc != 0 {
					t.Errorf("on_next_task(NULL) = %d", rc)
				}
				var r result
				select {
				case r = <-done:
				case <-ctx.Done():
					t.Fatal("the consumer never saw the end")
				}
				if !errors.Is(r.err, io.EOF) {
					t.Errorf("after %d batches: %v, want io.EOF", r.n, r.err)
				}
				if r.n != nb {
					t.Errorf("got %d batches, want %d", r.n, nb)
				}
				for i := range min(len(r.mds), len(mds)) {
					if !r.mds[i].Equal(mds[i]) {
						t.Errorf("batch %d: metadata %v, want %v", i, r.mds[i], mds[i])
					}
				}
				atEnd := f.requests.Load()
				if _, err := h.Next(ctx); !errors.Is(err, io.EOF) {
					t.Errorf("Next again: %v, want io.EOF", err)
				}
				time.Sleep(20 * time.Millisecond)
				if n := f.requests.Load(); n != atEnd {
					t.Errorf("the handler called request %d times after it delivered the end", n-atEnd)
				}
				if g := f.granted.Load(); g > int64(depth+nb) {
					t.Errorf("the handler requested %d tasks for %d batches at queue depth %d", g, nb, depth)
				}
				if n := f.invalid.Load(); n != 0 {
					t.Errorf("the handler called request with n <= 0 %d times", n)
				}
				f.released.Store(true)
				ffi.Call1(hc.Release, uintptr(unsafe.Pointer(hc)))
				waitDone(t, h, 5*time.Second)
				closeHandler(t, h)
				f.checkNoCallsAfterRelease(t)
				for i, ft := range tasks {
					if e, d := ft.extracted.Load(), ft.discarded.Load(); e != 1 || d != 0 {
						t.Errorf("task %d: extracted %d times, discarded %d times; want extracted once", i, e, d)
					}
				}
				if n := strayExtracts.Swap(0); n != 0 {
					t.Errorf("%d extract_data calls on a task after on_next_task returned or twice", n)
				}
				if n := fakeExtractErr.Swap(0); n != 0 {
					t.Errorf("%d task exports failed", n)
				}
			})
		}
	}
}

// Tasks that arrive after Cancel are given back: extract_data exactly once
// each, into a scratch struct (never a NULL out), and the handler is
// released cleanly.
func TestHandlerDiscardsTasksAfterCancel(t *testing.T) {
	failOnCallbackPanics(t)
	t.Cleanup(noLeaksAfter(t)) // after the test's own C memory is freed
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := regressBatches(t, 6)
	h, err := async.NewHandler(async.WithQueueDepth(8))
	if err != nil {
		t.Fatal(err)
	}
	hc := h.C()
	f := newFakeProducer(t)
	hc.Producer = uintptr(unsafe.Pointer(f.p))
	if rc := callOnSchema(hc, exportedSchema(t, regressSchema)); rc != 0 {
		t.Fatalf("on_schema = %d", rc)
	}
	if err := f.waitGranted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var tasks []*fakeTask
	send := func(rec arrow.RecordBatch) int32 {
		db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
		if err != nil {
			t.Fatal(err)
		}
		ft, rc := sendTask(t, hc, db, arrow.Metadata{})
		tasks = append(tasks, ft)
		return rc
	}
	for _, rec := range recs[:3] {
		if rc := send(rec); rc != 0 {
			t.Fatalf("on_next_task = %d", rc)
		}
	}
	h.Cancel()
	h.Cancel()
	if n := f.cancels.Load(); n != 1 {
		t.Errorf("Cancel twice called the producer's cancel %d times, want 1", n)
	}
	// The producer may still deliver tasks it had in flight.
	for _, rec := range recs[3:] {
		send(rec) // any return code is fine after cancel
	}
	ffi.Call(hc.OnNextTask, uintptr(unsafe.Pointer(hc)), 0, 0)
	f.released.Store(true)
	ffi.Call1(hc.Release, uintptr(unsafe.Pointer(hc)))
	waitDone(t, h, 5*time.Second)
	closeHandler(t, h) // discards what is still queued
	for i, ft := range tasks {
		if e, d := ft.extracted.Load(), ft.discarded.Load(); e != 1 || d != 0 {
			t.Errorf("task %d: extracted %d times, with a NULL out %d times; want extracted once", i, e, d)
		}
	}
	if n := strayExtracts.Swap(0); n != 0 {
		t.Errorf("%d extract_data calls on a task after on_next_task returned or twice", n)
	}
	f.checkNoCallsAfterRelease(t)
}

// A producer's cancel may report an error through on_error before it
// returns (the spec allows on_error, and only on_error, from cancel). The
// Handler must take that call on the same goroutine without deadlocking,
// deliver the error, and end cleanly.
func TestHandlerOnErrorFromCancel(t *testing.T) {
	failOnCallbackPanics(t)
	t.Cleanup(noLeaksAfter(t)) // after the test's own C memory is freed
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	hc := h.C()
	f := newFakeProducer(t)
	f.errorInCancel = hc
	hc.Producer = uintptr(unsafe.Pointer(f.p))
	if rc := callOnSchema(hc, exportedSchema(t, regressSchema)); rc != 0 {
		t.Fatalf("on_schema = %d", rc)
	}
	cancelled := make(chan struct{})
	go func() { h.Cancel(); close(cancelled) }()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		// The goroutine stays blocked: nothing below can be cleaned up.
		t.Fatal("Cancel deadlocked: the producer's cancel called on_error synchronously")
	}
	var pe *cdevice.ProducerError
	if _, err := h.Next(ctx); !errors.As(err, &pe) || pe.Code != 5 || pe.Message != "cancel failed" {
		t.Errorf("Next after cancel reported an error: %v, want the producer's error 5 \"cancel failed\"", err)
	}
	f.released.Store(true)
	ffi.Call1(hc.Release, uintptr(unsafe.Pointer(hc)))
	waitDone(t, h, 5*time.Second)
	closeHandler(t, h)
	f.checkNoCallsAfterRelease(t)
}

// ---- (3) no spinning while nothing is requested ----

// asyncGoroutines returns the state ("select", "chan receive", "running",
// ...) of every goroutine that is running the async package's own code.
func asyncGoroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var states []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, stack, _ := strings.Cut(g, "\n")
		// "goroutine 7 [select]:" or "goroutine 7 [chan receive, 2 minutes]:"
		_, state, _ := strings.Cut(header, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		if strings.Contains(stack, "github.com/purearrow/cdevice/async.") {
			states = append(states, state)
		}
	}
	return states
}

// parked reports whether every state is a wait on a channel, select, lock
// or condition: not running, runnable, sleeping (a polling loop) or in a
// system call.
func parked(states []string) bool {
	for _, s := range states {
		switch s {
		case "running", "runnable", "sleep", "syscall", "preempted":
			return false
		}
	}
	return true
}

// wantIdle fails t unless at least want goroutines run the async package's
// code and, once they have come to rest, stay parked: 50 goroutine dumps a
// couple of milliseconds apart find them waiting in at least 45. A loop
// that spins or polls is caught in the act nearly every time; a goroutine
// that waits is seen otherwise at most in passing, however loaded the
// machine, because nothing wakes it (the test holds back what would). No
// clock is read.
func wantIdle(t *testing.T, what string, want int) {
	t.Helper()
	var states []string
	if !settle.Eventually(func() bool { states = asyncGoroutines(); return len(states) >= want && parked(states) }) {
		t.Fatalf("%s: the async goroutines never came to rest: %q (want %d at least)", what, states, want)
	}
	// A loop that spins or polls is busy in nearly every sample; a waiting
	// goroutine may be caught once in the moment the runtime moves it (an
	// emulated CPU under load, qemu's, showed one runnable in 50), so one
	// busy sample in ten is allowed.
	busy := 0
	for range 50 {
		time.Sleep(2 * time.Millisecond)
		if s := asyncGoroutines(); !parked(s) {
			busy, states = busy+1, s
		}
	}
	if busy > 5 {
		t.Fatalf("%s: an async goroutine was busy in %d of 50 samples, last %q (something spins or polls)", what, busy, states)
	}
}

// arrow-go v18.8.0's producer spun while the consumer requested nothing.
// With queue depth 1 and a consumer that takes one batch and then takes
// no more for a while, Produce has nothing requested: it must wait,
// parked.
func TestRegressProducerBlocksWhileNothingRequested(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := regressBatches(t, 4)
	h, err := async.NewHandler(async.WithQueueDepth(1))
	if err != nil {
		t.Fatal(err)
	}
	errc := startProduce(ctx, regressSchema, copiedBatches(ctx, recs, device.CPU), h.C())
	b, err := h.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	wantIdle(t, "nothing requested", 1)
	n := 1
	for b, err := range h.All(ctx) {
		if err != nil {
			t.Fatalf("after %d batches: %v", n, err)
		}
		_ = b
		n++
	}
	if n != len(recs) {
		t.Errorf("got %d batches, want %d", n, len(recs))
	}
	if err := waitProduce(t, errc, 10*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 5*time.Second)
	closeHandler(t, h)
}

// The consumer side of "no busy waiting": Next blocked on a producer whose
// source stalls leaves both parked too.
func TestHandlerBlocksWhileProducerStalls(t *testing.T) {
	t.Cleanup(noLeaksAfter(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := regressBatches(t, 3)
	release := make(chan struct{})
	src := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for i, rec := range recs {
			if i == 1 {
				<-release // stall (blocked, not spinning) before the second batch
			}
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
			if !yield(db, err) || err != nil {
				return
			}
		}
	}
	h, err := async.NewHandler(async.WithQueueDepth(8))
	if err != nil {
		t.Fatal(err)
	}
	errc := startProduce(ctx, regressSchema, iter.Seq2[*cdevice.DeviceRecordBatch, error](src), h.C())
	b, err := h.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	next := make(chan error, 1)
	go func() { // blocks until the source goes on
		b, err := h.Next(ctx)
		if err == nil {
			b.Release()
		}
		next <- err
	}()
	wantIdle(t, "Next waiting on a stalled source", 2) // Produce's goroutine and Next's
	close(release)
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	for _, err := range h.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := waitProduce(t, errc, 10*time.Second); err != nil {
		t.Errorf("Produce: %v", err)
	}
	waitDone(t, h, 5*time.Second)
	closeHandler(t, h)
}
