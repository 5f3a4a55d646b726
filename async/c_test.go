package async_test

// The other side of these tests is real C on threads of its own:
// testdata/c/async.c, compiled with gcc at test time. Its producer
// (as_produce) drives our Handler from its pthreads; its consumer
// (as_consumer_*) is a handler that our Produce drives, extracting tasks on
// worker pthreads and requesting in varying chunks. Both watch us for
// breaches of the protocol and count them as problems. The batches are
// struct<id: int64, name: utf8> with id b*1000+r and name "n<b>_<r>"
// (acBatch builds the same with arrow-go; keep the two in step).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"sync"
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
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
)

const acTimeout = 20 * time.Second

func acFn(t testing.TB, name string) func(...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "async"), name)
}

// acCall calls a C function whose arguments are C ints, pointers (int) and
// int64_t (int64), each passed the way the C ABI wants on this target.
func acCall(t testing.TB, name string, args ...any) uintptr {
	t.Helper()
	var words []uintptr
	for _, a := range args {
		switch v := a.(type) {
		case int64: // the C functions take intptr_t (see testdata/c/cdata.c)
			words = append(words, uintptr(v))
		case int:
			words = append(words, uintptr(v))
		case uintptr:
			words = append(words, v)
		default:
			t.Fatalf("acCall: argument of type %T", a)
		}
	}
	return acFn(t, name)(words...)
}

func acI64(t testing.TB, name string, args ...any) int64 {
	t.Helper()
	return int64(int(acCall(t, name, args...))) // int: sign-extends a 32-bit word
}

func acPtr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// acNoLeaks loads the C library (skipping without gcc), zeroes its
// counters, and checks when the test ends that every producer thread is
// done, that nothing the C side made (producers, tasks, batch and schema
// structs) is live, that nothing exported or imported is held, and that
// the C producer saw no breach of the protocol.
func acNoLeaks(t *testing.T) {
	t.Helper()
	acFn(t, "as_reset")()
	t.Cleanup(func() {
		acFn(t, "as_wait")()
		if n := acI64(t, "as_problems"); n != 0 {
			t.Errorf("the C producer saw %d protocol breaches; the first: %s", n, ffi.GoString(acFn(t, "as_problem_message")()))
		}
		var l cdevice.Leaks
		var c int64
		if settle.Eventually(func() bool {
			l, c = cdevice.LiveLeaks(), acI64(t, "as_live")
			return l.Exports() == 0 && l.Imports() == 0 && l.DeviceArrays == 0 && l.CAllocations == 0 && c == 0
		}) {
			return
		}
		t.Errorf("held after the test: %s, C live %d", l, c)
	})
}

// ---- the batches ---------------------------------------------------------

var acSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String},
}, nil)

func acBatch(b, rows int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, acSchema)
	defer bld.Release()
	ids := bld.Field(0).(*array.Int64Builder)
	names := bld.Field(1).(*array.StringBuilder)
	for r := range rows {
		ids.Append(int64(b*1000 + r))
		names.Append(fmt.Sprintf("n%d_%d", b, r))
	}
	return bld.NewRecordBatch()
}

// acSource yields n batches of rows rows, each made and copied to the CPU
// device as Produce pulls it; made counts them.
func acSource(ctx context.Context, n, rows int, made *int) iter.Seq2[*cdevice.DeviceRecordBatch, error] {
	return func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
		for b := range n {
			rec := acBatch(b, rows)
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
			rec.Release()
			if made != nil {
				*made++
			}
			if !yield(db, err) || err != nil {
				return
			}
		}
	}
}

// acCheckBatch checks batch b of rows rows: its task metadata, device and
// values.
func acCheckBatch(t testing.TB, ctx context.Context, b, rows int, got async.Batch) {
	t.Helper()
	if v, ok := got.Metadata.GetValue("batch"); !ok || v != strconv.Itoa(b) {
		t.Errorf("batch %d: task metadata %v, want batch=%d", b, got.Metadata, b)
	}
	if d := got.Device(); d == nil || d.Type() != abi.DeviceCPU || got.Length != int64(rows) {
		t.Errorf("batch %d: device %v, length %d; want cpu, %d", b, d, got.Length, rows)
	}
	rec, err := got.ToHost(ctx)
	if err != nil {
		t.Errorf("batch %d: ToHost: %v", b, err)
		return
	}
	defer rec.Release()
	want := acBatch(b, rows)
	defer want.Release()
	if !array.RecordEqual(want, rec) {
		t.Errorf("batch %d:\nwant %v\ngot  %v", b, want, rec)
	}
}

func acWaitDone(t testing.TB, h *async.Handler) {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(acTimeout):
		t.Fatalf("Done not closed within %v: the C producer never released the handler", acTimeout)
	}
}

func acClose(t testing.TB, h *async.Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// acProduce starts the C producer on h.
// acHandler begins a test of a Handler against the C producer: the leak
// checks of acNoLeaks, a context that ends with the test (acTimeout at
// most), and the Handler.
func acHandler(t *testing.T, opts ...async.Option) (context.Context, *async.Handler) {
	t.Helper()
	acNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
	t.Cleanup(cancel)
	h, err := async.NewHandler(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, h
}

func acProduce(t testing.TB, h *async.Handler, batches, rows int64, threads int, failAt int64, schemaFail bool) {
	t.Helper()
	sf := 0
	if schemaFail {
		sf = 1
	}
	if rc := int32(acCall(t, "as_produce", acPtr(h.C()), batches, rows, threads, failAt, sf, int64(abi.DeviceCPU))); rc != 0 {
		t.Fatalf("as_produce = %d", rc)
	}
}

// ---- the C producer drives our Handler ------------------------------------

func TestCProducerToHandler(t *testing.T) {
	const batches, rows = 30, 7
	for _, threads := range []int{1, 4} {
		for _, depth := range []int{1, 8, 64} {
			for _, useAll := range []bool{false, true} {
				t.Run(fmt.Sprintf("threads=%d/depth=%d/all=%v", threads, depth, useAll), func(t *testing.T) {
					ctx, h := acHandler(t, async.WithQueueDepth(depth))
					acProduce(t, h, batches, rows, threads, -1, false)
					sc, err := h.Schema(ctx)
					if err != nil {
						t.Fatalf("Schema: %v", err)
					}
					if !sc.Equal(acSchema) {
						t.Errorf("schema:\nwant %s\ngot  %s", acSchema, sc)
					}
					if v, ok := h.AdditionalMetadata().GetValue("total_batches"); !ok || v != strconv.Itoa(batches) {
						t.Errorf("AdditionalMetadata %v, want total_batches=%d", h.AdditionalMetadata(), batches)
					}
					n := 0
					if useAll {
						for b, err := range h.All(ctx) {
							if err != nil {
								t.Fatalf("after %d batches: %v", n, err)
							}
							acCheckBatch(t, ctx, n, rows, b)
							n++
						}
					} else {
						for {
							b, err := h.Next(ctx)
							if err == io.EOF {
								break
							}
							if err != nil {
								t.Fatalf("after %d batches: %v", n, err)
							}
							acCheckBatch(t, ctx, n, rows, b)
							b.Release()
							n++
						}
						if _, err := h.Next(ctx); err != io.EOF {
							t.Errorf("Next after the end: %v, want io.EOF", err)
						}
					}
					if n != batches {
						t.Errorf("%d batches, want %d", n, batches)
					}
					acWaitDone(t, h)
					acClose(t, h)
					acFn(t, "as_wait")()
					if d, x, disc := acI64(t, "as_tasks_delivered"), acI64(t, "as_extract_calls"), acI64(t, "as_tasks_discarded"); d != batches || x != batches || disc != 0 {
						t.Errorf("tasks delivered %d, extract_data calls %d, discarded %d; want %d, %d, 0", d, x, disc, batches, batches)
					}
					if n := acI64(t, "as_requests_after_end"); n != 0 {
						t.Logf("%d request calls after the end (harmless)", n)
					}
				})
			}
		}
	}
}

// A handler in a struct of the caller's (WithHandlerStruct), driven by the
// C producer from its threads: at release the struct reads released and is
// still the caller's to free.
func TestCProducerToHandlerStruct(t *testing.T) {
	const batches, rows = 12, 5
	for _, threads := range []int{1, 4} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			hc := cdevice.New[abi.AsyncDeviceStreamHandler]()
			defer cdevice.Free(hc) // before acNoLeaks' check, a cleanup
			ctx, h := acHandler(t, async.WithQueueDepth(4), async.WithHandlerStruct(hc))
			if h.C() != hc {
				t.Fatalf("C() = %p, want the caller's struct %p", h.C(), hc)
			}
			acProduce(t, h, batches, rows, threads, -1, false)
			n := 0
			for b, err := range h.All(ctx) {
				if err != nil {
					t.Fatalf("after %d batches: %v", n, err)
				}
				acCheckBatch(t, ctx, n, rows, b)
				n++
			}
			if n != batches {
				t.Errorf("%d batches, want %d", n, batches)
			}
			acWaitDone(t, h)
			if hc.Release != 0 || hc.PrivateData != 0 {
				t.Errorf("after release the struct reads release %#x, private_data %#x; want 0, 0", hc.Release, hc.PrivateData)
			}
			acClose(t, h)
			acFn(t, "as_wait")()
		})
	}
}

// A schema the handler cannot import: on_schema returns non-zero, and the
// producer then only calls release (no on_error, no tasks).
func TestCProducerSchemaRejected(t *testing.T) {
	for _, threads := range []int{1, 4} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			ctx, h := acHandler(t)
			acProduce(t, h, 5, 3, threads, -1, true)
			sc, err := h.Schema(ctx)
			if err == nil {
				t.Fatalf("Schema succeeded on an unknown format: %s", sc)
			}
			var pe *cdevice.ProducerError
			if errors.As(err, &pe) {
				t.Errorf("Schema error %v is a *ProducerError: the producer sent no on_error", err)
			}
			acWaitDone(t, h)
			if _, err := h.Next(ctx); err == nil || err == io.EOF {
				t.Errorf("Next after a rejected schema: %v, want an error", err)
			}
			acClose(t, h)
			acFn(t, "as_wait")()
			if n := acI64(t, "as_schema_rejections"); n != 1 {
				t.Errorf("on_schema returned non-zero %d times, want 1", n)
			}
			if n := acI64(t, "as_tasks_delivered"); n != 0 {
				t.Errorf("%d tasks delivered after the rejection", n)
			}
		})
	}
}

func TestCProducerError(t *testing.T) {
	const batches, rows, failAt = 10, 4, 3
	for _, threads := range []int{1, 4} {
		for _, depth := range []int{1, 8, 64} {
			t.Run(fmt.Sprintf("threads=%d/depth=%d", threads, depth), func(t *testing.T) {
				ctx, h := acHandler(t, async.WithQueueDepth(depth))
				acProduce(t, h, batches, rows, threads, failAt, false)
				var err error
				n := 0
				for {
					b, e := h.Next(ctx)
					if e != nil {
						err = e
						break
					}
					acCheckBatch(t, ctx, n, rows, b)
					b.Release()
					n++
				}
				// The tasks that came before on_error are not lost.
				if n != failAt {
					t.Errorf("%d batches before the error, want %d", n, failAt)
				}
				var pe *cdevice.ProducerError
				if !errors.Is(err, cdevice.ErrProducer) || !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *ProducerError wrapping ErrProducer", err, err)
				}
				want := fmt.Sprintf("injected failure at batch %d", failAt)
				if pe.Code != int(cdevice.EIO) || pe.Message != want {
					t.Errorf("ProducerError code %d message %q, want %d %q", pe.Code, pe.Message, cdevice.EIO, want)
				}
				if _, e := h.Next(ctx); !errors.Is(e, cdevice.ErrProducer) {
					t.Errorf("Next after the error: %v, want the producer's error again", e)
				}
				acWaitDone(t, h)
				acClose(t, h)
				acFn(t, "as_wait")()
				if d, x := acI64(t, "as_tasks_delivered"), acI64(t, "as_extract_calls"); d != failAt || x != failAt {
					t.Errorf("tasks delivered %d, extract_data calls %d; want %d each", d, x, failAt)
				}
			})
		}
	}
}

// Cancel part way through a long stream: the producer stops and releases
// the handler without on_error; every task it handed over is extracted
// exactly once, those we did not read too (into a scratch struct, never
// with a NULL out, which the spec does not provide for and arrow-go's
// extract_data writes through).
func TestCProducerCancel(t *testing.T) {
	const batches, rows, read = 100000, 3, 5
	for _, how := range []string{"Close", "Cancel"} {
		for _, threads := range []int{1, 4} {
			for _, depth := range []int{1, 8, 64} {
				t.Run(fmt.Sprintf("%s/threads=%d/depth=%d", how, threads, depth), func(t *testing.T) {
					ctx, h := acHandler(t, async.WithQueueDepth(depth))
					acProduce(t, h, batches, rows, threads, -1, false)
					for n := range read {
						b, err := h.Next(ctx)
						if err != nil {
							t.Fatalf("batch %d: %v", n, err)
						}
						acCheckBatch(t, ctx, n, rows, b)
						b.Release()
					}
					if how == "Cancel" {
						var wg sync.WaitGroup
						for range 3 { // idempotent and thread-safe
							wg.Add(1)
							go func() { defer wg.Done(); h.Cancel() }()
						}
						wg.Wait()
						h.Cancel()
						acWaitDone(t, h)
						// Whatever Next says now, it is not a producer error:
						// cancellation is not one.
						for range batches {
							b, err := h.Next(ctx)
							if err != nil {
								if err != io.EOF {
									var pe *cdevice.ProducerError
									if errors.As(err, &pe) {
										t.Errorf("Next after Cancel: %v", err)
									} else {
										t.Logf("Next after Cancel: %v", err)
									}
								}
								break
							}
							b.Release()
						}
					}
					acClose(t, h)
					acFn(t, "as_wait")()
					d, x, disc := acI64(t, "as_tasks_delivered"), acI64(t, "as_extract_calls"), acI64(t, "as_tasks_discarded")
					if d >= batches {
						t.Errorf("all %d tasks were delivered despite the cancel", d)
					}
					if x != d {
						t.Errorf("%d extract_data calls for %d tasks", x, d)
					}
					if disc != 0 {
						t.Errorf("%d extract_data calls with a NULL out", disc)
					}
					t.Logf("delivered %d, read %d", d, read)
				})
			}
		}
	}
}

// ---- our Produce drives the C consumer ------------------------------------

// acConsumer is a C consumer; freed when the test ends if it settled.
type acConsumer struct {
	t testing.TB
	c uintptr
}

func acNewConsumer(t testing.TB, chunk, cancelAfter int64, workers int) *acConsumer {
	t.Helper()
	c := acCall(t, "as_consumer_new", chunk, cancelAfter, workers)
	if c == 0 {
		t.Fatal("as_consumer_new failed")
	}
	ac := &acConsumer{t: t, c: c}
	t.Cleanup(func() { acFn(t, "as_consumer_free")(c) })
	return ac
}

func (c *acConsumer) handler() *abi.AsyncDeviceStreamHandler {
	return (*abi.AsyncDeviceStreamHandler)(abi.Pointer(acFn(c.t, "as_consumer_handler")(c.c)))
}

func (c *acConsumer) i64(name string) int64 { return acI64(c.t, name, c.c) }

// i32 is for functions returning a C int.
func (c *acConsumer) i32(name string) int { return int(int32(acCall(c.t, name, c.c))) }

// wait waits for the release and the workers; it fails the test on a
// timeout (the consumer is then leaked, not freed).
func (c *acConsumer) wait() {
	c.t.Helper()
	if rc := int32(acCall(c.t, "as_consumer_wait", c.c, int64(acTimeout/time.Millisecond))); rc != 0 {
		c.t.Fatalf("as_consumer_wait = %d: never released (releases %d, received %d)", rc, c.i64("as_consumer_releases"), c.i64("as_consumer_received"))
	}
}

func (c *acConsumer) errorCode() int { return c.i32("as_consumer_error_code") }

func (c *acConsumer) errorMessage() string {
	return ffi.GoString(acFn(c.t, "as_consumer_error_message")(c.c))
}

// checkClean: released exactly once, and no protocol breach seen.
func (c *acConsumer) checkClean() {
	c.t.Helper()
	if n := c.i64("as_consumer_releases"); n != 1 {
		c.t.Errorf("handler released %d times, want 1", n)
	}
	if n := c.i64("as_consumer_problems"); n != 0 {
		c.t.Errorf("the C consumer saw %d problems; the first: %s", n, ffi.GoString(acFn(c.t, "as_consumer_problem")(c.c)))
	}
}

func acMD(batches int) async.ProduceOption {
	return async.WithAdditionalMetadata(arrow.NewMetadata([]string{"total_batches"}, []string{strconv.Itoa(batches)}))
}

func TestProduceToCConsumer(t *testing.T) {
	const batches, rows = 40, 6
	for _, chunk := range []int64{1, 3, 16} {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("chunk=%d/workers=%d", chunk, workers), func(t *testing.T) {
				acNoLeaks(t)
				ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
				defer cancel()
				c := acNewConsumer(t, chunk, -1, workers)
				made := 0
				if err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, batches, rows, &made)), c.handler(), acMD(batches)); err != nil {
					t.Errorf("Produce: %v", err)
				}
				c.wait()
				c.checkClean()
				if n, r := c.i64("as_consumer_batches"), c.i64("as_consumer_rows"); n != batches || r != batches*rows {
					t.Errorf("C checked %d batches (%d rows), want %d (%d)", n, r, batches, batches*rows)
				}
				if c.i32("as_consumer_saw_end") != 1 {
					t.Error("the C consumer saw no end of stream (on_next_task(NULL))")
				}
				if code := c.errorCode(); code != 0 {
					t.Errorf("on_error(%d, %q) on a clean stream", code, c.errorMessage())
				}
				if n := c.i64("as_consumer_total_batches"); n != batches {
					t.Errorf("additional_metadata total_batches %d, want %d", n, batches)
				}
				if made != batches {
					t.Errorf("the source made %d batches, want %d", made, batches)
				}
			})
		}
	}
}

// The C consumer cancels after k tasks: Produce stops pulling and returns
// nil (cancellation is not an error), with release and no on_error.
func TestProduceToCConsumerCancel(t *testing.T) {
	const batches, rows, k = 1000, 4, 5
	for _, chunk := range []int64{1, 3, 16} {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("chunk=%d/workers=%d", chunk, workers), func(t *testing.T) {
				acNoLeaks(t)
				ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
				defer cancel()
				c := acNewConsumer(t, chunk, k, workers)
				made := 0
				if err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, batches, rows, &made)), c.handler()); err != nil {
					t.Errorf("Produce after the consumer cancelled: %v, want nil", err)
				}
				c.wait()
				c.checkClean()
				if code := c.errorCode(); code != 0 {
					t.Errorf("on_error(%d, %q) after cancel", code, c.errorMessage())
				}
				got, disc, recv := c.i64("as_consumer_batches"), c.i64("as_consumer_discarded"), c.i64("as_consumer_received")
				if got < k || got+disc != recv || recv >= batches {
					t.Errorf("checked %d, discarded %d, received %d: want >= %d checked, all received handled, fewer than %d", got, disc, recv, k, batches)
				}
				if made >= batches {
					t.Errorf("the source was read to the end (%d batches) despite the cancel", made)
				}
				t.Logf("received %d, discarded %d, source made %d", recv, disc, made)
			})
		}
	}
}

// A handler callback that returns non-zero stops the producer: release
// without on_error, and Produce returns a *ConsumerError.
func TestProduceToCConsumerRefuses(t *testing.T) {
	const batches, rows, k = 20, 3, 3
	for _, c := range []struct {
		name     string
		callback string
		setup    func(c *acConsumer)
		received int64
	}{
		{"on_schema", "on_schema", func(c *acConsumer) { acFn(c.t, "as_consumer_fail_on_schema")(c.c) }, 0},
		{"task 1", "on_next_task", func(c *acConsumer) { acCall(c.t, "as_consumer_fail_on_task", c.c, int64(1)) }, 1},
		{"task 3", "on_next_task", func(c *acConsumer) { acCall(c.t, "as_consumer_fail_on_task", c.c, int64(k)) }, k},
	} {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				acNoLeaks(t)
				ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
				defer cancel()
				cc := acNewConsumer(t, 2, -1, workers)
				c.setup(cc)
				err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, batches, rows, nil)), cc.handler())
				var ce *async.ConsumerError
				if !errors.Is(err, async.ErrConsumer) || !errors.As(err, &ce) {
					t.Fatalf("Produce: %v (%T), want a *ConsumerError wrapping ErrConsumer", err, err)
				}
				if ce.Callback != c.callback || ce.Code != int(cdevice.EINVAL) {
					t.Errorf("ConsumerError %q code %d, want %q %d", ce.Callback, ce.Code, c.callback, cdevice.EINVAL)
				}
				cc.wait()
				cc.checkClean()
				if code := cc.errorCode(); code != 0 {
					t.Errorf("on_error(%d, %q) after the handler refused", code, cc.errorMessage())
				}
				if n := cc.i64("as_consumer_received"); n != c.received {
					t.Errorf("%d tasks reached the consumer, want %d", n, c.received)
				}
			})
		}
	}
}

// request(0) is the consumer's error: our producer reports it through
// on_error (EINVAL) from its own goroutine, then releases the handler.
func TestProduceToCConsumerBadRequest(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			acNoLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
			defer cancel()
			c := acNewConsumer(t, 4, -1, workers)
			acFn(t, "as_consumer_request_bad")(c.c)
			made := 0
			err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, 10, 3, &made)), c.handler())
			if err == nil {
				t.Error("Produce returned nil after request(0)")
			}
			t.Logf("Produce: %v", err)
			c.wait()
			c.checkClean()
			if code := c.errorCode(); code != int(cdevice.EINVAL) {
				t.Errorf("on_error code %d (%q), want EINVAL (%d)", code, c.errorMessage(), cdevice.EINVAL)
			}
			if n := c.i64("as_consumer_received"); n != 0 {
				t.Errorf("%d tasks delivered though none was requested", n)
			}
		})
	}
}

// ---- a consumer that uses the producer as late as it may -------------------

// TestProduceToLateConsumer: the C late consumer (as_late_*, modelled on
// arrow-go's handler) calls request and cancel on our producer from
// on_next_task(NULL), from release, and from its worker after release
// returned (request, then cancel, before each extract_data of the tasks it
// still holds), hold: only once Produce has returned. The producer struct
// must stay valid and inert until the last task is extracted, then be
// freed exactly once (the leak checks); Produce returns nil and sends
// nothing after the end.
func TestProduceToLateConsumer(t *testing.T) {
	const rows = 4
	for _, hold := range []bool{true, false} {
		for _, chunk := range []int64{1, 2, 4, 8} {
			for _, batches := range []int{0, 1, 3, 17} {
				t.Run(fmt.Sprintf("hold=%v/chunk=%d/batches=%d", hold, chunk, batches), func(t *testing.T) {
					failOnCallbackPanics(t)
					acNoLeaks(t)
					for range 10 {
						base := cdevice.LiveLeaks()
						h := 0
						if hold {
							h = 1
						}
						c := acCall(t, "as_late_new", chunk, h)
						if c == 0 {
							t.Fatal("as_late_new failed")
						}
						t.Cleanup(func() { acFn(t, "as_late_free")(c) })
						i64 := func(name string) int64 { return acI64(t, name, c) }
						ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
						hc := (*abi.AsyncDeviceStreamHandler)(abi.Pointer(acFn(t, "as_late_handler")(c)))
						err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, batches, rows, nil)), hc)
						cancel()
						if err != nil {
							t.Errorf("Produce: %v", err)
						}
						if rc := int32(acCall(t, "as_late_wait", c, int64(acTimeout/time.Millisecond))); rc != 0 {
							t.Fatalf("as_late_wait = %d: not released, or tasks left (queued %d, extracted %d)", rc, i64("as_late_queued"), i64("as_late_batches"))
						}
						if n := i64("as_late_problems"); n != 0 {
							t.Errorf("the late consumer saw %d problems; the first: %s", n, ffi.GoString(acFn(t, "as_late_problem")(c)))
						}
						if n, r := i64("as_late_batches"), i64("as_late_rows"); n != int64(batches) || r != int64(batches*rows) {
							t.Errorf("extracted %d batches (%d rows), want %d (%d)", n, r, batches, batches*rows)
						}
						if int32(acCall(t, "as_late_saw_end", c)) != 1 {
							t.Error("no end of stream")
						}
						if n := i64("as_late_after_release"); hold && n != int64(2*batches) {
							t.Errorf("%d calls after release, want %d", n, 2*batches)
						}
						checkLeaks(t, base) // the producer freed with its last task
						if t.Failed() {
							return
						}
					}
				})
			}
		}
	}
}

// ---- the harness agrees with itself --------------------------------------

// The C producer drives the C consumer directly: no Go in between.
func TestCAsyncHarness(t *testing.T) {
	for _, chunk := range []int64{1, 3, 16} {
		for _, threads := range []int{1, 4} {
			t.Run(fmt.Sprintf("chunk=%d/threads=%d", chunk, threads), func(t *testing.T) {
				acNoLeaks(t)
				c := acNewConsumer(t, chunk, -1, threads)
				if rc := int32(acCall(t, "as_produce", acPtr(c.handler()), int64(25), int64(5), threads, int64(-1), 0, int64(abi.DeviceCPU))); rc != 0 {
					t.Fatalf("as_produce = %d", rc)
				}
				c.wait()
				c.checkClean()
				if n := c.i64("as_consumer_batches"); n != 25 || c.errorCode() != 0 || c.i64("as_consumer_total_batches") != 25 {
					t.Errorf("batches %d, error %d %q, total_batches %d", n, c.errorCode(), c.errorMessage(), c.i64("as_consumer_total_batches"))
				}
			})
		}
	}
	t.Run("fail_at", func(t *testing.T) {
		acNoLeaks(t)
		c := acNewConsumer(t, 2, -1, 2)
		acCall(t, "as_produce", acPtr(c.handler()), int64(10), int64(5), 2, int64(4), 0, int64(abi.DeviceCPU))
		c.wait()
		c.checkClean()
		if code, msg := c.errorCode(), c.errorMessage(); code != int(cdevice.EIO) || msg != "injected failure at batch 4" {
			t.Errorf("on_error(%d, %q), want EIO and the injected message", code, msg)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		acNoLeaks(t)
		c := acNewConsumer(t, 3, 4, 2)
		acCall(t, "as_produce", acPtr(c.handler()), int64(100000), int64(5), 2, int64(-1), 0, int64(abi.DeviceCPU))
		c.wait()
		c.checkClean()
		if c.errorCode() != 0 || c.i64("as_consumer_received") >= 100000 {
			t.Errorf("error %d, received %d", c.errorCode(), c.i64("as_consumer_received"))
		}
	})
}

// A C producer that holds a recursive lock of its own around every handler
// call and takes it in request and cancel as well (legal: request from
// within a callback still works on the same thread). A handler that called
// request or cancel while holding a lock that its callbacks also take would
// deadlock against it as soon as tasks and requests overlap (queue depth >
// 1, or Cancel while tasks arrive).
func TestCProducerLockedCallbacks(t *testing.T) {
	const batches, rows = 2000, 2
	for _, threads := range []int{1, 4} {
		for _, depth := range []int{1, 8, 64} {
			for _, stop := range []bool{false, true} {
				t.Run(fmt.Sprintf("threads=%d/depth=%d/cancel=%v", threads, depth, stop), func(t *testing.T) {
					acNoLeaks(t)
					acCall(t, "as_set_locked_calls", 1)
					ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
					defer cancel()
					h, err := async.NewHandler(async.WithQueueDepth(depth))
					if err != nil {
						t.Fatal(err)
					}
					acProduce(t, h, batches, rows, threads, -1, false)
					acCall(t, "as_set_locked_calls", 0) // for producers started later
					done := make(chan error, 1)
					go func() {
						n := 0
						for {
							b, err := h.Next(ctx)
							if err == io.EOF {
								if n != batches {
									err = fmt.Errorf("%d batches, want %d", n, batches)
								} else {
									err = nil
								}
								done <- err
								return
							}
							if err != nil {
								done <- fmt.Errorf("after %d batches: %w", n, err)
								return
							}
							b.Release()
							if n++; stop && n == batches/4 {
								done <- h.Close(ctx)
								return
							}
						}
					}()
					select {
					case err := <-done:
						if err != nil {
							t.Error(err)
						}
					case <-time.After(acTimeout):
						// Stuck in C with locks held: nothing later could run.
						panic("TestCProducerLockedCallbacks: the handler deadlocked against a producer that locks around its callbacks")
					}
					acWaitDone(t, h)
					if !stop { // Close already ran
						acClose(t, h)
					}
				})
			}
		}
	}
}
