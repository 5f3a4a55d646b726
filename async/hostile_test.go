package async_test

// Hostile async peers in C (testdata/c/hostile.c): a handler that returns
// an error at every step our producer drives it through, and a producer
// that calls our handler's callbacks with NULL pointers and after it
// released the handler. Nothing may crash, hang or leak, and every
// refusal must reach the Go caller as a sentinel error.

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

func hxFn(t testing.TB, name string) func(...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "hostile"), name)
}

// hxLeakCheck snapshots the leak counters and checks, when the test ends,
// that they are back and no callback panicked.
func hxLeakCheck(t *testing.T) {
	t.Helper()
	hxFn(t, "hx_live") // loads the library (or skips) before the snapshot
	check := noLeaksAfter(t)
	t.Cleanup(check)
}

// The modes of hostile.c's handler.
const (
	hxFailSchema         = 1
	hxFailSchemaReleased = 2
	hxFailTask           = 4
	hxFailTaskExtracted  = 8
	hxExtractTwice       = 16
	hxBadRequest         = 32
	hxFailEnd            = 64
)

// TestHostileHandler: our Produce drives a C handler that refuses at each
// step in turn. Produce must return a *ConsumerError wrapping ErrConsumer
// naming the step (or nil where the protocol lets the handler's error
// pass), release the handler exactly once, and give back every batch.
func TestHostileHandler(t *testing.T) {
	const batches, rows = 6, 5
	cases := []struct {
		name     string
		mode     int
		callback string // "" : Produce returns nil
		code     int
		tasks    int64
	}{
		{"on_schema_fails", hxFailSchema, "on_schema", int(cdevice.EINVAL), 0},
		{"on_schema_fails_after_releasing_schema", hxFailSchemaReleased, "on_schema", int(cdevice.EINVAL), 0},
		{"every_step_fails", hxFailSchema | hxFailTask | hxFailEnd, "on_schema", int(cdevice.EINVAL), 0},
		{"first_task_fails", hxFailTask, "on_next_task", int(cdevice.EINVAL), 1},
		{"first_task_fails_after_extract", hxFailTaskExtracted, "on_next_task", int(cdevice.EIO), 1},
		{"request_zero", hxBadRequest, "request", int(cdevice.EINVAL), 0},
		{"extract_twice", hxExtractTwice, "", 0, batches},
		{"end_fails", hxFailEnd, "", 0, batches},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hxLeakCheck(t)
			x := hxFn(t, "hx_handler_new")(uintptr(c.mode))
			defer hxFn(t, "hx_handler_free")(x)
			counter := func(which int) int64 { return int64(int(hxFn(t, "hx_handler_counter")(x, uintptr(which)))) }
			h := (*abi.AsyncDeviceStreamHandler)(abi.Pointer(hxFn(t, "hx_handler_struct")(x)))
			ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
			defer cancel()
			made := 0
			err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, batches, rows, &made)), h)
			if c.callback == "" {
				if err != nil {
					t.Errorf("Produce: %v, want nil", err)
				}
			} else {
				var ce *async.ConsumerError
				if !errors.Is(err, async.ErrConsumer) || !errors.As(err, &ce) || ce.Callback != c.callback || (c.callback != "request" && ce.Code != c.code) {
					t.Errorf("Produce: %v, want a *ConsumerError for %s (code %d)", err, c.callback, c.code)
				}
			}
			if n := counter(4); n != 1 {
				t.Errorf("handler released %d times, want 1", n)
			}
			if n := counter(1); n != c.tasks {
				t.Errorf("%d tasks reached the handler, want %d", n, c.tasks)
			}
			switch c.mode {
			case hxFailSchema, hxFailSchemaReleased, hxBadRequest:
				if made != 0 {
					t.Errorf("%d batches pulled from the source though none was wanted", made)
				}
			case hxFailTaskExtracted:
				if n := counter(7); n != rows {
					t.Errorf("%d rows extracted, want %d", n, rows)
				}
			case hxExtractTwice:
				if n := counter(6); n != int64(cdevice.EINVAL) {
					t.Errorf("a task's second extract_data returned %d, want EINVAL", n)
				}
				if n := counter(7); n != batches*rows {
					t.Errorf("%d rows extracted, want %d", n, batches*rows)
				}
			}
			if c.mode == hxBadRequest {
				if n, code := counter(3), counter(5); n != 1 || code != int64(cdevice.EINVAL) {
					t.Errorf("on_error called %d times, last code %d; want once with EINVAL", n, code)
				}
			} else if n := counter(3); n != 0 {
				t.Errorf("on_error called %d times after the handler refused", n)
			}
			if n := counter(2); c.callback == "" && n != 1 {
				t.Errorf("%d end-of-stream calls, want 1", n)
			}
		})
	}
}

// TestHostileProducerNulls: a C producer calls our handler's callbacks with
// a NULL schema, a NULL handler and NULL message and metadata, hands over a
// task whose extract_data is NULL (null_task), and, through a copy of the
// handler struct it kept, calls every callback again after releasing it
// (a second release included). Each call must be refused (EINVAL) or be a
// no-op; the handler reports the NULL schema and ends cleanly.
func TestHostileProducerNulls(t *testing.T) {
	for _, nullTask := range []bool{false, true} {
		name := "callbacks"
		if nullTask {
			name = "with_null_extract_task"
		}
		t.Run(name, func(t *testing.T) {
			hxLeakCheck(t)
			h, err := async.NewHandler()
			if err != nil {
				t.Fatal(err)
			}
			mem, err := ffi.Calloc(8 * 8)
			if err != nil {
				t.Fatal(err)
			}
			defer ffi.Free(mem)
			arg := uintptr(0)
			if nullTask {
				arg = 1
			}
			hxFn(t, "hx_produce_nulls")(uintptr(unsafe.Pointer(h.C())), arg, uintptr(mem))
			rc := unsafe.Slice((*int64)(mem), 8)
			einval := int64(cdevice.EINVAL)
			for i, what := range []string{"on_schema(h, NULL)", "on_schema(NULL, schema)", "on_next_task(NULL, task)", "", "on_schema after release", "on_next_task after release"} {
				if what != "" && rc[i] != einval {
					t.Errorf("%s = %d, want EINVAL", what, rc[i])
				}
			}
			if nullTask && rc[3] != einval {
				t.Errorf("on_next_task(h, task with NULL extract_data) = %d, want EINVAL (refused: nothing could extract it)", rc[3])
			}
			if rc[6] != 0 || rc[7] != 0 {
				t.Errorf("the handler called request %d and cancel %d times, want none (no schema)", rc[6], rc[7])
			}
			ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
			defer cancel()
			acWaitDone(t, h)
			if _, err := h.Schema(ctx); !errors.Is(err, cdevice.ErrInvalid) {
				t.Errorf("Schema: %v, want ErrInvalid (a NULL schema)", err)
			}
			if _, err := h.Next(ctx); err == nil {
				t.Error("Next after a NULL schema returned a batch")
			}
			acClose(t, h)
			if n := int64(int(hxFn(t, "hx_task_extract_calls")())); n != 0 {
				t.Errorf("extract_data of a task given to a NULL handler was called %d times", n)
			}
		})
	}
}

// TestHostileProducerNullExtract: a task whose extract_data is NULL, after
// a valid schema: on_next_task refuses it (EINVAL), and Next returns an
// error, not a batch (and never calls the NULL function).
func TestHostileProducerNullExtract(t *testing.T) {
	hxLeakCheck(t)
	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	if rc := int32(hxFn(t, "hx_produce_null_extract")(uintptr(unsafe.Pointer(h.C())))); rc != 0 && rc != int32(cdevice.EINVAL) {
		t.Fatalf("hx_produce_null_extract = %d", rc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
	defer cancel()
	b, err := h.Next(ctx)
	if err == nil {
		b.Release()
		t.Error("Next returned a batch from a task without extract_data")
	}
	acClose(t, h)
}

// TestHostileHandlerNullCallbacks: a C handler one of whose callbacks is
// NULL. Produce refuses it with ErrInvalid before calling anything of it,
// releases it once, and pulls nothing from the source.
func TestHostileHandlerNullCallbacks(t *testing.T) {
	for which, name := range []string{"on_schema", "on_next_task", "on_error"} {
		t.Run(name, func(t *testing.T) {
			hxLeakCheck(t)
			x := hxFn(t, "hx_handler_new")(0)
			defer hxFn(t, "hx_handler_free")(x)
			hxFn(t, "hx_handler_drop")(x, uintptr(which))
			counter := func(which int) int64 { return int64(int(hxFn(t, "hx_handler_counter")(x, uintptr(which)))) }
			h := (*abi.AsyncDeviceStreamHandler)(abi.Pointer(hxFn(t, "hx_handler_struct")(x)))
			ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
			defer cancel()
			made := 0
			err := async.Produce(ctx, acSchema, abi.DeviceCPU, async.Batches(acSource(ctx, 2, 5, &made)), h)
			if !errors.Is(err, cdevice.ErrInvalid) {
				t.Errorf("Produce: %v, want ErrInvalid", err)
			}
			if n := counter(4); n != 1 {
				t.Errorf("handler released %d times, want 1", n)
			}
			if n := counter(0) + counter(1) + counter(2) + counter(3); n != 0 || made != 0 {
				t.Errorf("%d callbacks called, %d batches pulled: want none", n, made)
			}
		})
	}
}

// TestHostileProducerNullFunctions: a C producer whose request or cancel
// is NULL. Our handler refuses it in on_schema (EINVAL: Schema says
// ErrInvalid) and never calls it: Cancel and Close before the producer
// releases the handler do nothing of it.
func TestHostileProducerNullFunctions(t *testing.T) {
	for which, name := range []string{"request", "cancel"} {
		t.Run(name, func(t *testing.T) {
			hxLeakCheck(t)
			h, err := async.NewHandler()
			if err != nil {
				t.Fatal(err)
			}
			rc, err := ffi.Calloc(8)
			if err != nil {
				t.Fatal(err)
			}
			defer ffi.Free(rc)
			prod := hxFn(t, "hx_null_fn_start")(uintptr(unsafe.Pointer(h.C())), uintptr(which), uintptr(rc))
			if got := *(*int64)(rc); got != int64(cdevice.EINVAL) {
				t.Errorf("on_schema = %d, want EINVAL", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), acTimeout)
			defer cancel()
			if _, err := h.Schema(ctx); !errors.Is(err, cdevice.ErrInvalid) {
				t.Errorf("Schema: %v, want ErrInvalid", err)
			}
			h.Cancel() // the producer is still live: nothing of it may be called
			hxFn(t, "hx_null_fn_finish")(uintptr(unsafe.Pointer(h.C())), prod)
			acClose(t, h)
		})
	}
}
