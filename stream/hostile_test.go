package stream_test

// Hostile stream producers and consumers in C (testdata/c/hostile.c): a
// producer whose get_next never ends (only empty batches, or the very same
// batch every time), one that fails with no message, one whose batches sit
// on another device, and a consumer of our exported stream that calls it
// after releasing it. Nothing may crash, hang or leak.

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

func hxFn(t testing.TB, name string) func(...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "hostile"), name)
}

// hxNoLeaks checks, when the test ends, that everything hostile.c made was
// released and nothing is held on the Go side.
func hxNoLeaks(t *testing.T) {
	t.Helper()
	live := hxFn(t, "hx_live")
	base := int64(live())
	t.Cleanup(func() {
		var l cdevice.Leaks
		var c int64
		if settle.Eventually(func() bool {
			l, c = cdevice.LiveLeaks(), int64(live())-base
			return l.Exports() == 0 && l.Imports() == 0 && l.CallbackPanics == 0 && c == 0
		}) {
			return
		}
		t.Errorf("held after the test: %s; hostile.c structs live %d", l, c)
	})
}

// hxStream makes a hostile ArrowArrayStream of the given kind (see struct
// hx_stream in hostile.c); nullFn names a function pointer left NULL.
func hxStream(t *testing.T, kind, rows, nullFn int) *abi.ArrayStream {
	t.Helper()
	s := testsupport.OffHeap[abi.ArrayStream](t)
	if rc := int32(hxFn(t, "hx_make_stream")(cstPtr(s), uintptr(kind), uintptr(rows), uintptr(nullFn))); rc != 0 {
		t.Fatalf("hx_make_stream = %d", rc)
	}
	t.Cleanup(func() { hxFn(t, "hx_stream_forget")() })
	return s
}

func hxCounter(t *testing.T, which int) int64 {
	t.Helper()
	return int64(int(hxFn(t, "hx_stream_counter")(uintptr(which))))
}

var hxSchema = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)

func hxBatch(rows int) arrow.RecordBatch {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range rows {
		b.Append(int32(i))
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(hxSchema, []arrow.Array{col}, int64(rows))
}

// TestStreamReadAfterRelease: a Next after the reader's last Release (a
// caller's bug) is ErrReleased, without a call of the producer: its stream
// and our copy of the struct are gone by then. The same for device streams,
// whose DeviceType stays readable.
func TestStreamReadAfterRelease(t *testing.T) {
	check := func(t *testing.T, calls int64, err error) {
		t.Helper()
		if !errors.Is(err, stream.ErrReleased) {
			t.Errorf("Next after Release: %v, want ErrReleased", err)
		}
		if n := hxCounter(t, 0) - calls; n != 0 || hxCounter(t, 4) != 1 {
			t.Errorf("get_next called %d times after release, the stream released %d times; want 0 and 1", n, hxCounter(t, 4))
		}
	}
	t.Run("host", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportReader(hxStream(t, 0, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Next() {
			t.Fatalf("the first batch: %v", r.Err())
		}
		r.Release()
		calls := hxCounter(t, 0)
		if r.Next() {
			t.Error("Next after Release returned a batch")
		}
		check(t, calls, r.Err())
	})
	t.Run("device", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportDeviceStream(hxDeviceStream(t, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
		r.Release()
		calls := hxCounter(t, 0)
		_, err = r.Next(context.Background())
		check(t, calls, err)
		if r.DeviceType() != abi.DeviceCPU {
			t.Errorf("DeviceType after Release: %v", r.DeviceType())
		}
	})
}

// TestHostileStreamEndlessEmpty: get_next returns an empty batch forever.
// WithMaxEmptyBatches stops it; without it the consumer's context does.
func TestHostileStreamEndlessEmpty(t *testing.T) {
	t.Run("guard", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportReader(hxStream(t, 0, 0, 0), stream.WithMaxEmptyBatches(50))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			n++
			if n > 1000 {
				t.Fatal("WithMaxEmptyBatches(50) did not stop the stream")
			}
		}
		if err := r.Err(); !errors.Is(err, stream.ErrEmptyBatches) || !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("Err %v, want ErrEmptyBatches wrapping ErrInvalid", err)
		}
		if n != 49 {
			t.Errorf("%d batches before the guard tripped, want 49", n)
		}
		if r.Next() {
			t.Error("Next after the guard tripped returned a batch")
		}
		calls := hxCounter(t, 0)
		r.Release()
		if calls != 50 || hxCounter(t, 4) != 1 {
			t.Errorf("get_next called %d times, stream released %d times; want 50 and 1", calls, hxCounter(t, 4))
		}
	})
	t.Run("context", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportReader(hxStream(t, 0, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		var last error
		for b, err := range r.All(ctx) {
			if err != nil {
				last = err
				break
			}
			if b.NumRows() != 0 {
				t.Fatalf("batch %d has %d rows", n, b.NumRows())
			}
			if n++; n == 2000 {
				cancel()
			}
		}
		if !errors.Is(last, context.Canceled) || n != 2000 {
			t.Errorf("after %d batches: %v, want context.Canceled after 2000", n, last)
		}
	})
	t.Run("device", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportDeviceStream(hxDeviceStream(t, 0, 0), stream.WithMaxEmptyBatches(20))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		ctx := context.Background()
		n := 0
		for {
			b, err := r.Next(ctx)
			if err != nil {
				if !errors.Is(err, stream.ErrEmptyBatches) || n != 19 {
					t.Errorf("after %d batches: %v, want ErrEmptyBatches after 19", n, err)
				}
				break
			}
			b.Release()
			if n++; n > 100 {
				t.Fatal("WithMaxEmptyBatches(20) did not stop the device stream")
			}
		}
	})
}

// TestHostileStreamSameBatchForever: get_next hands out the same batch
// (the same buffers, children and private_data) every time, forever. Each
// import releases its copy exactly once; the consumer stops when it likes.
func TestHostileStreamSameBatchForever(t *testing.T) {
	const rows, batches = 7, 500
	hxNoLeaks(t)
	r, err := stream.ImportReader(hxStream(t, 1, rows, 0), stream.WithImportOptions(cdevice.WithFullValidation()))
	if err != nil {
		t.Fatal(err)
	}
	want := hxBatch(rows)
	defer want.Release()
	var kept []arrow.RecordBatch // some kept past Next, as a consumer may
	for n := 0; n < batches; n++ {
		if !r.Next() {
			t.Fatalf("the stream ended after %d batches: %v", n, r.Err())
		}
		if !array.RecordEqual(want, r.RecordBatch()) {
			t.Fatalf("batch %d: %v, want %v", n, r.RecordBatch(), want)
		}
		if n%50 == 0 {
			r.RecordBatch().Retain()
			kept = append(kept, r.RecordBatch())
		}
	}
	r.Release()
	out, released := hxCounter(t, 2), hxCounter(t, 3)
	if out != batches || released != batches-int64(len(kept)) {
		t.Errorf("%d batches handed out, %d released; want %d and %d (the rest kept)", out, released, batches, batches-len(kept))
	}
	for _, b := range kept {
		if !array.RecordEqual(want, b) {
			t.Errorf("a kept batch changed: %v", b)
		}
		b.Release()
	}
	if got := hxCounter(t, 3); got != batches {
		t.Errorf("%d of %d batches released", got, batches)
	}
}

// TestHostileStreamErrors: get_next fails with a NULL get_last_error
// message; the reader stops at the first failure and never calls get_next
// again; a NULL get_last_error function is tolerated.
func TestHostileStreamErrors(t *testing.T) {
	for _, c := range []struct {
		name         string
		kind, nullFn int
		msg          string
	}{
		{"null_message", 2, 0, ""},
		{"fails_once", 3, 0, "injected failure"},
		{"no_get_last_error", 2, 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			hxNoLeaks(t)
			r, err := stream.ImportReader(hxStream(t, c.kind, 3, c.nullFn))
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if r.Next() {
					t.Fatal("a batch from a failing stream")
				}
			}
			var pe *cdevice.ProducerError
			if !errors.As(r.Err(), &pe) || pe.Code != int(cdevice.EIO) || pe.Message != c.msg || pe.Call != "get_next" {
				t.Errorf("Err %v, want get_next's EIO with message %q", r.Err(), c.msg)
			}
			if n := hxCounter(t, 1); n != 0 {
				t.Errorf("get_next called %d times after it failed", n)
			}
			r.Release()
		})
	}
	t.Run("device_type_mismatch", func(t *testing.T) {
		hxNoLeaks(t)
		r, err := stream.ImportDeviceStream(hxDeviceStream(t, 4, 3))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		if b, err := r.Next(context.Background()); !errors.Is(err, cdevice.ErrInvalid) {
			if b != nil {
				b.Release()
			}
			t.Errorf("a CUDA batch in a CPU stream: %v, want ErrInvalid", err)
		}
		if _, err := r.Next(context.Background()); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("Next after the failure: %v, want the same error", err)
		}
	})
}

// TestHostileStreamNullFunctions: a stream whose get_schema or get_next
// pointer is NULL. The importer calls them without a check, and purego
// panics ("purego: fn is nil") out of ImportReader / Reader.Next, taking
// the consumer down: a known issue in stream/import.go (cstream.init and
// cstream.next should refuse NULL function pointers with ErrInvalid, and
// release the stream).
func TestHostileStreamNullFunctions(t *testing.T) {
	for _, c := range []struct {
		name   string
		nullFn int
	}{{"get_schema", 1}, {"get_next", 2}} {
		t.Run(c.name, func(t *testing.T) {
			hxNoLeaks(t)
			r, err := stream.ImportReader(hxStream(t, 1, 3, c.nullFn))
			if err == nil {
				for r.Next() {
				}
				err = r.Err()
				r.Release()
			}
			if !errors.Is(err, cdevice.ErrInvalid) {
				t.Errorf("NULL %s: %v, want ErrInvalid", c.name, err)
			}
		})
	}
}

// TestHostileStreamConsumer: a C consumer of our exported stream calls
// get_next with a NULL out, then keeps calling the stream after releasing
// it (with the function pointers it saved), and releases it twice. Every
// late call must fail without touching its out struct, and the second
// release must do nothing.
func TestHostileStreamConsumer(t *testing.T) {
	hxNoLeaks(t)
	rb := hxBatch(4)
	rdr, err := array.NewRecordReader(hxSchema, []arrow.RecordBatch{rb, rb, rb})
	rb.Release()
	if err != nil {
		t.Fatal(err)
	}
	s := cstExport(t, rdr)
	mem, err := ffi.Calloc(8 * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer ffi.Free(mem)
	hxFn(t, "hx_abuse_stream")(cstPtr(s), uintptr(mem))
	rc := append([]int64(nil), unsafe.Slice((*int64)(mem), 8)...)
	if rc[0] != 0 || rc[1] != 0 {
		t.Errorf("get_schema %d, get_next %d; want 0 and 0", rc[0], rc[1])
	}
	if rc[2] != int64(cdevice.EINVAL) {
		t.Errorf("get_next(NULL out) = %d, want EINVAL", rc[2])
	}
	if rc[3] == 0 || rc[4] == 0 {
		t.Errorf("after release: get_next %d, get_schema %d; want errors", rc[3], rc[4])
	}
	if rc[5] != 1 || rc[6] != 1 {
		t.Errorf("a call after release wrote its out struct (array untouched %d, schema untouched %d)", rc[5], rc[6])
	}
	if rc[7] != 0 {
		t.Errorf("get_last_error after release returned a message")
	}
	if !s.Released() {
		t.Error("the stream is not marked released")
	}
	if l := cdevice.LiveLeaks(); l.Exports() != 0 || l.CallbackPanics != 0 {
		t.Errorf("after the consumer: %s", l)
	}
}
