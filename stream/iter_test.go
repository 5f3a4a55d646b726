package stream_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/stream"
)

// countedReader is an array.RecordReader over fixed batches that counts its
// references, so a test can see when the exporter lets go of it. After
// failAfter batches (when failAfter >= 0) Next stops with err.
type countedReader struct {
	refs      atomic.Int64
	recs      []arrow.RecordBatch
	cur       arrow.RecordBatch
	i         int
	failAfter int
	err       error
}

// newCountedReader retains recs until its last Release.
func newCountedReader(recs []arrow.RecordBatch) *countedReader {
	r := &countedReader{recs: recs, failAfter: -1}
	for _, rec := range recs {
		rec.Retain()
	}
	r.refs.Store(1)
	return r
}

func (r *countedReader) Retain() { r.refs.Add(1) }
func (r *countedReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for _, rec := range r.recs {
		rec.Release()
	}
}
func (r *countedReader) Schema() *arrow.Schema { return sample.StreamSchema }
func (r *countedReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.failAfter >= 0 && r.i == r.failAfter {
		return false
	}
	if r.i >= len(r.recs) {
		return false
	}
	r.cur = r.recs[r.i]
	r.cur.Retain()
	r.i++
	return true
}
func (r *countedReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *countedReader) Record() arrow.RecordBatch      { return r.cur }
func (r *countedReader) Err() error {
	if r.failAfter >= 0 && r.i == r.failAfter {
		return r.err
	}
	return nil
}

var _ array.RecordReader = (*countedReader)(nil)

// exportCounted exports src into a C heap stream and drops the caller's
// reference to it: from here on only the export holds it.
func exportCounted(t *testing.T, src *countedReader) *abi.ArrayStream {
	t.Helper()
	s := offHeap[abi.ArrayStream](t)
	err := stream.ExportReader(src, s)
	src.Release()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if src.refs.Load() == 0 {
		t.Fatal("ExportReader did not retain its reader")
	}
	return s
}

func importStream(t *testing.T, s *abi.ArrayStream, opts ...stream.Option) *stream.Reader {
	t.Helper()
	r, err := stream.ImportReader(s, opts...)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return r
}

// checkReleased checks that releasing the Reader released the C stream and
// the exporter's reader, and that nothing exported or imported is held.
func checkReleased(t *testing.T, s *abi.ArrayStream, src *countedReader) {
	t.Helper()
	if !s.Released() {
		t.Error("the C stream is not released")
	}
	if n := src.refs.Load(); n != 0 {
		t.Errorf("the exported reader still has %d references", n)
	}
	checkNoLeaks(t)
}

// checkNoLeaks fails unless no export and no import is live, once
// finalizers of dropped values have had a chance to run.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	var l cdevice.Leaks
	if settle.Eventually(func() bool { l = cdevice.LiveLeaks(); return l.Exports() == 0 && l.Imports() == 0 }) {
		return
	}
	t.Errorf("held across the C boundary: %s", l)
}

func TestAll(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		want := makeBatches(t, nil, 10, 8)
		src := newCountedReader(want)
		s := exportCounted(t, src)
		r := importStream(t, s)
		n := 0
		for rec, err := range r.All(context.Background()) {
			if err != nil {
				t.Fatalf("after %d batches: %v", n, err)
			}
			if n < len(want) {
				checkBatch(t, n, want[n], rec)
			}
			n++
		}
		if n != len(want) {
			t.Errorf("got %d batches, want %d", n, len(want))
		}
		r.Release()
		checkReleased(t, s, src)
	})
}

// Breaking out of the loop leaves the reader to its owner, whose Release
// then lets go of everything.
func TestAllBreakEarly(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		for _, stop := range []int{0, 1, 3} {
			want := makeBatches(t, nil, 10, 8)
			src := newCountedReader(want)
			s := exportCounted(t, src)
			r := importStream(t, s)
			n := 0
			for rec, err := range r.All(context.Background()) {
				if err != nil {
					t.Fatalf("after %d batches: %v", n, err)
				}
				checkBatch(t, n, want[n], rec)
				if n == stop {
					break
				}
				n++
			}
			if n != stop {
				t.Errorf("stopped after %d batches, want %d", n, stop)
			}
			r.Release()
			checkReleased(t, s, src)
		}
	})
}

func TestAllContextCanceled(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		for _, cancelAt := range []int{0, 2} { // 0: canceled before the loop
			want := makeBatches(t, nil, 10, 8)
			src := newCountedReader(want)
			s := exportCounted(t, src)
			r := importStream(t, s)
			ctx, cancel := context.WithCancel(context.Background())
			if cancelAt == 0 {
				cancel()
			}
			var (
				n    int
				errs []error
			)
			for rec, err := range r.All(ctx) {
				if err != nil {
					if rec != nil {
						t.Error("a batch came with the error")
					}
					errs = append(errs, err)
					continue
				}
				if len(errs) > 0 {
					t.Fatal("a batch came after the error")
				}
				checkBatch(t, n, want[n], rec)
				if n++; n == cancelAt {
					cancel()
				}
			}
			cancel()
			if n != cancelAt {
				t.Errorf("got %d batches, want %d", n, cancelAt)
			}
			if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
				t.Errorf("errors %v, want one context.Canceled", errs)
			}
			r.Release()
			checkReleased(t, s, src)
		}
	})
}

// An error of the Go source reaches the consumer as the final pair of the
// iteration: through C, a *ProducerError with the errno-style code and
// get_last_error's message.
func TestAllProducerError(t *testing.T) {
	defer identity.Set(identity.Set(false))
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{
		{"EIO", errors.New("disk on fire"), int(cdevice.EIO)},
		{"EINVAL", fmt.Errorf("%w: bad row", cdevice.ErrInvalid), int(cdevice.EINVAL)},
		{"Errno", fmt.Errorf("spill: %w", syscall.ENOSPC), int(cdevice.ENOSPC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := makeBatches(t, nil, 5, 8)
			src := newCountedReader(want)
			src.failAfter, src.err = 2, tc.err
			s := exportCounted(t, src)
			r := importStream(t, s)
			n := 0
			var got error
			for rec, err := range r.All(context.Background()) {
				if err != nil {
					if got != nil {
						t.Fatal("more than one error")
					}
					got = err
					continue
				}
				if got != nil {
					t.Fatal("a batch came after the error")
				}
				checkBatch(t, n, want[n], rec)
				n++
			}
			if n != 2 {
				t.Errorf("got %d batches before the error, want 2", n)
			}
			var pe *cdevice.ProducerError
			switch {
			case !errors.Is(got, cdevice.ErrProducer) || !errors.As(got, &pe):
				t.Errorf("error %v (%T), want a *cdevice.ProducerError", got, got)
			case pe.Code != tc.code:
				t.Errorf("code %d, want %d", pe.Code, tc.code)
			case !strings.Contains(pe.Message, tc.err.Error()):
				t.Errorf("message %q does not tell %q", pe.Message, tc.err)
			}
			r.Release()
			checkReleased(t, s, src)
		})
	}
}

// Releasing the Reader does not release the batches it handed out: they
// keep the source's memory until their own Release.
func TestReleaseKeepsBatches(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		want := makeBatches(t, nil, 6, 8)
		recs := sample.StreamBatches(mem, 6, 8)
		src := newCountedReader(recs)
		for _, rec := range recs {
			rec.Release()
		}
		s := exportCounted(t, src)
		// The source batches are now held only by the exported reader.

		r := importStream(t, s)
		for range 2 { // keep the second batch
			if !r.Next() {
				t.Fatalf("Next: %v", r.Err())
			}
		}
		kept := r.RecordBatch()
		kept.Retain()
		var fromAll arrow.RecordBatch
		for rec, err := range r.All(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			fromAll = rec
			fromAll.Retain()
			break
		}
		if fromAll == nil {
			t.Fatal("All yielded nothing")
		}
		r.Release()
		if !s.Released() {
			t.Error("the C stream is not released")
		}
		runtime.GC()
		checkBatch(t, 1, want[1], kept)
		checkBatch(t, 2, want[2], fromAll)
		if mem.CurrentAlloc() == 0 {
			t.Error("the batches' memory went back while they were held")
		}
		kept.Release()
		fromAll.Release()
		checkReleased(t, s, src)
		settle.Eventually(func() bool { return mem.CurrentAlloc() == 0 })
		mem.AssertSize(t, 0)
	})
}

// get_schema works at any time before release: before, between and after
// the batches, at the end too. Called through the C function pointers.
func TestGetSchemaAnyTime(t *testing.T) {
	forEachIdentity(t, func(t *testing.T) {
		want := makeBatches(t, nil, 4, 8)
		src := newCountedReader(want)
		s := exportCounted(t, src)
		sp := uintptr(unsafe.Pointer(s))
		sch, arr := offHeap[abi.Schema](t), offHeap[abi.Array](t)

		if p := ffi.Call(s.GetLastError, sp); p != 0 {
			t.Errorf("get_last_error = %#x before any error, want NULL", p)
		}
		getSchema := func(when string) *arrow.Schema {
			t.Helper()
			if rc := int32(ffi.Call(s.GetSchema, sp, uintptr(unsafe.Pointer(sch)))); rc != 0 {
				t.Fatalf("get_schema %s = %d", when, rc)
			}
			got, err := cdevice.ImportSchema(sch)
			if err != nil {
				t.Fatalf("import of the schema %s: %v", when, err)
			}
			for _, d := range schemaDiffs(sample.StreamSchema, got) {
				t.Errorf("schema %s: %s", when, d)
			}
			return got
		}
		sc := getSchema("first")
		for i := range len(want) + 1 {
			if i == 2 {
				getSchema("after 2 batches")
			}
			if rc := int32(ffi.Call(s.GetNext, sp, uintptr(unsafe.Pointer(arr)))); rc != 0 {
				t.Fatalf("get_next %d = %d", i, rc)
			}
			if i == len(want) {
				if !arr.Released() {
					t.Fatal("get_next at the end gave a live array")
				}
				break
			}
			got, err := cdevice.ImportRecordBatchWithSchema(arr, sc)
			if err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
			checkBatch(t, i, want[i], got)
			got.Release()
		}
		getSchema("at the end")
		if p := ffi.Call(s.GetLastError, sp); p != 0 {
			t.Errorf("get_last_error = %#x with no error, want NULL", p)
		}

		// Calls after release are refused.
		getNext, getSchemaFn := s.GetNext, s.GetSchema
		ffi.Call(s.Release, sp)
		if !s.Released() {
			t.Fatal("release left the stream live")
		}
		if rc := int32(ffi.Call(getSchemaFn, sp, uintptr(unsafe.Pointer(sch)))); rc == 0 {
			t.Error("get_schema after release succeeded")
		}
		if rc := int32(ffi.Call(getNext, sp, uintptr(unsafe.Pointer(arr)))); rc == 0 {
			t.Error("get_next after release succeeded")
		}
		if !sch.Released() || !arr.Released() {
			t.Error("a call after release filled its output")
		}
		if _, err := stream.ImportReader(s); !errors.Is(err, cdevice.ErrReleased) {
			t.Errorf("ImportReader of a released stream: %v, want ErrReleased", err)
		}
		checkReleased(t, s, src)
	})
}

// Imports of released (or never filled) structs are refused.
func TestImportReleased(t *testing.T) {
	s := offHeap[abi.ArrayStream](t)
	if _, err := stream.ImportReader(s); !errors.Is(err, cdevice.ErrReleased) || !errors.Is(err, stream.ErrReleased) {
		t.Errorf("ImportReader of a zeroed stream: %v, want ErrReleased", err)
	}
	ds := offHeap[abi.DeviceArrayStream](t)
	if _, err := stream.ImportDeviceStream(ds); !errors.Is(err, cdevice.ErrReleased) {
		t.Errorf("ImportDeviceStream of a zeroed stream: %v, want ErrReleased", err)
	}

	// A stream that its consumer imported and released.
	src := newCountedReader(makeBatches(t, nil, 2, 8))
	s = exportCounted(t, src)
	r := importStream(t, s)
	r.Release()
	if _, err := stream.ImportReader(s); !errors.Is(err, cdevice.ErrReleased) {
		t.Errorf("ImportReader of a released stream: %v, want ErrReleased", err)
	}
	checkReleased(t, s, src)
}
