package stream_test

// The other side of these tests is real C: testdata/c/stream.c (and, for
// OpenCL, testdata/c/opencl_peer.c), compiled with gcc at test time. Its
// producers make, and its consumers check, the batches cstBatch builds;
// keep the two in step.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/settle"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// cstNever is fail_at = -1 (no injected failure) as a C int64_t argument.
const cstNever = ^uintptr(0)

func cstFn(t testing.TB, name string) func(...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "stream"), name)
}

func cstPtr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

func cstInt64(t testing.TB) *int64 {
	p, err := ffi.Calloc(8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(p) })
	return (*int64)(p)
}

// cstNoLeaks loads the C library (skipping without gcc) and checks, when the
// test ends, that nothing exported or imported is held and that every
// struct the C side made was released.
func cstNoLeaks(t *testing.T) {
	t.Helper()
	live := cstFn(t, "st_live_count")
	t.Cleanup(func() {
		var l cdevice.Leaks
		var c int64
		if settle.Eventually(func() bool {
			l, c = cdevice.LiveLeaks(), int64(live())
			return l.Exports() == 0 && l.Imports() == 0 && l.DeviceArrays == 0 && c == 0
		}) {
			return
		}
		t.Errorf("held after the test: %s, C structs live %d", l, c)
	})
}

func cstLive(t testing.TB) int64 { t.Helper(); return int64(int(cstFn(t, "st_live_count")())) }

// ---- the batches of stream.c, built with arrow-go ----------------------

var cstMeta = arrow.NewMetadata([]string{"producer"}, []string{"st"})

var cstSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64},
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
}, &cstMeta)

// cstBatch is batch b of rows rows. skip > 0 puts skip junk rows first and
// slices them off, so the C consumer must honour every offset.
func cstBatch(b, rows, skip int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, cstSchema)
	defer bld.Release()
	ids := bld.Field(0).(*array.Int64Builder)
	names := bld.Field(1).(*array.StringBuilder)
	scores := bld.Field(2).(*array.Float64Builder)
	tags := bld.Field(3).(*array.ListBuilder)
	items := tags.ValueBuilder().(*array.Int32Builder)
	for range skip {
		ids.Append(-1)
		names.Append("junk")
		scores.Append(-1)
		tags.Append(true)
		items.Append(-7)
	}
	for r := range rows {
		ids.Append(int64(b*1000 + r))
		if r%5 == 4 {
			names.AppendNull()
		} else {
			names.Append(fmt.Sprintf("n%d_%d", b, r))
		}
		scores.Append(float64(r) * 0.5)
		tags.Append(true)
		if r%2 == 0 {
			items.AppendValues([]int32{int32(r), int32(r + 1)}, nil)
		}
	}
	rec := bld.NewRecordBatch()
	if skip == 0 {
		return rec
	}
	defer rec.Release()
	return rec.NewSlice(int64(skip), int64(skip+rows))
}

func cstBatches(t testing.TB, n, rows, skip int) []arrow.RecordBatch {
	recs := make([]arrow.RecordBatch, n)
	for b := range recs {
		recs[b] = cstBatch(b, rows, skip)
	}
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return recs
}

func cstCheckSchema(t testing.TB, sc *arrow.Schema) {
	t.Helper()
	if !sc.Equal(cstSchema) {
		t.Errorf("schema:\nwant %s\ngot  %s", cstSchema, sc)
	}
	if v, ok := sc.Metadata().GetValue("producer"); !ok || v != "st" {
		t.Errorf("schema metadata %v, want producer=st", sc.Metadata())
	}
}

func cstCheckBatch(t testing.TB, b, rows int, got arrow.RecordBatch) {
	t.Helper()
	want := cstBatch(b, rows, 0)
	defer want.Release()
	if !array.RecordEqual(want, got) {
		t.Errorf("batch %d:\nwant %v\ngot  %v", b, want, got)
	}
}

// cstMakeStream has stream.c make an ArrowArrayStream.
func cstMakeStream(t *testing.T, batches, rows int, failSchema bool, failAt int, empty bool) *abi.ArrayStream {
	t.Helper()
	s := testsupport.OffHeap[abi.ArrayStream](t)
	fs, e := uintptr(0), uintptr(0)
	if failSchema {
		fs = 1
	}
	if empty {
		e = 1
	}
	if rc := int32(cstFn(t, "st_make_stream")(cstPtr(s), uintptr(batches), uintptr(rows), fs, uintptr(failAt), e)); rc != 0 {
		t.Fatalf("st_make_stream = %d", rc)
	}
	return s
}

func cstImport(t *testing.T, s *abi.ArrayStream, opts ...stream.Option) *stream.Reader {
	t.Helper()
	r, err := stream.ImportReader(s, opts...)
	if err != nil {
		t.Fatalf("ImportReader: %v", err)
	}
	if !s.Released() {
		t.Error("ImportReader did not move the stream (release still set)")
	}
	return r
}

func cstWantLive(t *testing.T, want int64, when string) {
	t.Helper()
	if n := cstLive(t); n != want {
		t.Errorf("%s: %d C structs live, want %d", when, n, want)
	}
}

// ---- C producers, our importer ------------------------------------------

// The C producers drained by the C consumers: the harness agrees with
// itself before it judges Go.
func TestCHarness(t *testing.T) {
	cstNoLeaks(t)
	out := cstInt64(t)
	s := cstMakeStream(t, 4, 9, false, -1, false)
	if n := int64(int(cstFn(t, "st_drain")(cstPtr(s), 4, cstPtr(out)))); n != 4 || *out != 36 {
		t.Errorf("st_drain = %d (%d rows), want 4 (36 rows): %s", n, *out, ffi.GoString(cstFn(t, "st_last_error")()))
	}
	s = cstMakeStream(t, 4, 9, false, 3, false)
	if n := int64(int(cstFn(t, "st_drain")(cstPtr(s), 4, cstPtr(out)))); n != -int64(cdevice.EIO) {
		t.Errorf("st_drain of a failing stream = %d, want -EIO", n)
	}
	if msg := ffi.GoString(cstFn(t, "st_last_error")()); msg != "injected failure at batch 3" {
		t.Errorf("st_last_error = %q", msg)
	}
	ds := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(cstFn(t, "st_make_device_stream_cpu")(cstPtr(ds), 3, 5, cstNever)); rc != 0 {
		t.Fatalf("st_make_device_stream_cpu = %d", rc)
	}
	if n := int64(int(cstFn(t, "st_drain_device_cpu")(cstPtr(ds), 3, cstPtr(out)))); n != 3 || *out != 15 {
		t.Errorf("st_drain_device_cpu = %d (%d rows), want 3 (15 rows): %s", n, *out, ffi.GoString(cstFn(t, "st_last_error")()))
	}
	// One thread: C producers, like most, are not thread-safe.
	s = cstMakeStream(t, 30, 2, false, -1, false)
	if n := int64(int(cstFn(t, "st_concurrent_get_next")(cstPtr(s), 1, 40))); n != 30 {
		t.Errorf("st_concurrent_get_next = %d, want 30", n)
	}
	cstFn(t, "st_release_raw")(cstPtr(s))
}

func TestCProducerStream(t *testing.T) {
	for _, c := range []struct {
		name          string
		batches, rows int
	}{{"batches", 5, 7}, {"no batches", 0, 7}, {"zero rows", 3, 0}, {"one large", 1, 5000}} {
		for _, useAll := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all=%v", c.name, useAll), func(t *testing.T) {
				cstNoLeaks(t)
				r := cstImport(t, cstMakeStream(t, c.batches, c.rows, false, -1, false))
				cstCheckSchema(t, r.Schema())
				n := 0
				if useAll {
					for rec, err := range r.All(context.Background()) {
						if err != nil {
							t.Fatal(err)
						}
						cstCheckBatch(t, n, c.rows, rec)
						n++
					}
				} else {
					for r.Next() {
						cstCheckBatch(t, n, c.rows, r.RecordBatch())
						n++
					}
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				if n != c.batches {
					t.Errorf("%d batches, want %d", n, c.batches)
				}
				if r.Next() {
					t.Error("Next after the end returned true")
				}
				r.Release()
				cstWantLive(t, 0, "after Release")
			})
		}
	}
}

func TestCProducerSchemaError(t *testing.T) {
	cstNoLeaks(t)
	s := cstMakeStream(t, 3, 4, true, -1, false)
	r, err := stream.ImportReader(s)
	if err == nil {
		r.Release()
		t.Fatal("ImportReader succeeded on a failing get_schema")
	}
	var pe *cdevice.ProducerError
	if !errors.Is(err, cdevice.ErrProducer) || !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ProducerError wrapping ErrProducer", err, err)
	}
	if pe.Code != int(cdevice.EINVAL) || pe.Message != "injected failure at get_schema" {
		t.Errorf("ProducerError code %d message %q, want %d %q", pe.Code, pe.Message, cdevice.EINVAL, "injected failure at get_schema")
	}
	if !strings.Contains(err.Error(), "injected failure at get_schema") {
		t.Errorf("error text %q lacks the producer's message", err)
	}
	// The stream was moved into the import, which released it on failure.
	if !s.Released() {
		t.Error("the caller's stream was not moved")
	}
	cstWantLive(t, 0, "after the failed import")
}

func TestCProducerGetNextError(t *testing.T) {
	for _, k := range []int{1, 3} {
		for _, useAll := range []bool{false, true} {
			t.Run(fmt.Sprintf("k=%d/all=%v", k, useAll), func(t *testing.T) {
				cstNoLeaks(t)
				r := cstImport(t, cstMakeStream(t, 10, 4, false, k, false))
				n := 0
				var err error
				if useAll {
					for rec, e := range r.All(context.Background()) {
						if e != nil {
							if rec != nil {
								t.Error("a non-nil batch with the error")
							}
							err = e
							break
						}
						cstCheckBatch(t, n, 4, rec)
						n++
					}
				} else {
					for r.Next() {
						cstCheckBatch(t, n, 4, r.RecordBatch())
						n++
					}
					err = r.Err()
				}
				if n != k-1 {
					t.Errorf("%d batches before the failure, want %d", n, k-1)
				}
				var pe *cdevice.ProducerError
				if !errors.Is(err, cdevice.ErrProducer) || !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *ProducerError", err, err)
				}
				want := fmt.Sprintf("injected failure at batch %d", k)
				if pe.Code != int(cdevice.EIO) || pe.Message != want {
					t.Errorf("ProducerError code %d message %q, want %d %q", pe.Code, pe.Message, cdevice.EIO, want)
				}
				if r.Next() || !errors.Is(r.Err(), cdevice.ErrProducer) {
					t.Errorf("after the failure: Next true or Err %v", r.Err())
				}
				r.Release()
				cstWantLive(t, 0, "after Release")
			})
		}
	}
}

// A consumer that stops early releases the stream and every batch exactly
// once; a batch it kept stays valid after the stream is gone.
func TestCProducerEarlyStop(t *testing.T) {
	const rows = 6
	t.Run("Release", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, 10, rows, false, -1, false))
		var kept arrow.RecordBatch
		for i := range 2 {
			if !r.Next() {
				t.Fatalf("batch %d: %v", i, r.Err())
			}
			kept = r.RecordBatch()
		}
		kept.Retain()
		r.Release()
		if cstLive(t) == 0 {
			t.Error("releasing the reader released a batch it had handed out")
		}
		cstCheckBatch(t, 1, rows, kept)
		kept.Release()
		cstWantLive(t, 0, "after the kept batch's Release")
	})
	// A reader dropped without Release gives the stream back when
	// collected, as arrow-go's cdata readers do.
	t.Run("collected", func(t *testing.T) {
		cstNoLeaks(t)
		func() {
			r := cstImport(t, cstMakeStream(t, 10, rows, false, -1, false))
			for r.Next() { // to the end: no current batch is left to hold
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
		}()
		if cstLive(t) == 0 {
			t.Fatal("the stream was released before the reader was collected")
		}
		settle.Eventually(func() bool { return cstLive(t) == 0 })
		cstWantLive(t, 0, "after the unreleased reader was collected")
		if n := cdevice.LiveLeaks().ImportedStreams; n != 0 {
			t.Errorf("%d imported streams live after collection", n)
		}
	})
	t.Run("break", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, 10, rows, false, -1, false))
		n := 0
		for rec, err := range r.All(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			cstCheckBatch(t, n, rows, rec)
			if n++; n == 2 {
				break
			}
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
	t.Run("context", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, 10, rows, false, -1, false))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		var err error
		for rec, e := range r.All(ctx) {
			if e != nil {
				err = e
				break
			}
			cstCheckBatch(t, n, rows, rec)
			if n++; n == 2 {
				cancel()
			}
		}
		if n != 2 || !errors.Is(err, context.Canceled) {
			t.Errorf("%d batches, error %v; want 2, context.Canceled", n, err)
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
}

// A producer that returns empty batches forever is stopped by
// WithMaxEmptyBatches; a finite run of empty batches is fine.
func TestCProducerEmptyBatches(t *testing.T) {
	t.Run("endless", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, -1, 5, false, -1, true), stream.WithMaxEmptyBatches(3))
		n := 0
		for r.Next() {
			if n++; n > 100 {
				t.Fatal("WithMaxEmptyBatches(3) did not stop the stream")
			}
		}
		if n > 3 {
			t.Errorf("%d empty batches before the stop, want at most 3", n)
		}
		if err := r.Err(); !errors.Is(err, stream.ErrEmptyBatches) || !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("Err %v, want ErrEmptyBatches wrapping ErrInvalid", err)
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
	t.Run("finite", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, 4, 5, false, -1, true), stream.WithMaxEmptyBatches(10))
		n := 0
		for r.Next() {
			if r.RecordBatch().NumRows() != 0 {
				t.Errorf("batch %d has %d rows", n, r.RecordBatch().NumRows())
			}
			n++
		}
		if n != 4 || r.Err() != nil {
			t.Errorf("%d batches, Err %v; want 4, nil", n, r.Err())
		}
		r.Release()
	})
}

// ---- Go sources, C consumers -------------------------------------------

// cstFailingReader yields its batches, then ends with err after failAfter.
type cstFailingReader struct {
	refs      atomic.Int64
	recs      []arrow.RecordBatch
	failAfter int
	err       error
	i         int
	cur       arrow.RecordBatch
	failed    bool
}

func (r *cstFailingReader) Retain()               { r.refs.Add(1) }
func (r *cstFailingReader) Release()              { r.refs.Add(-1) }
func (r *cstFailingReader) Schema() *arrow.Schema { return cstSchema }
func (r *cstFailingReader) Next() bool {
	if r.i == r.failAfter || r.i >= len(r.recs) {
		r.failed = r.i == r.failAfter
		r.cur = nil
		return false
	}
	r.cur = r.recs[r.i]
	r.i++
	return true
}
func (r *cstFailingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *cstFailingReader) Record() arrow.RecordBatch      { return r.cur }
func (r *cstFailingReader) Err() error {
	if r.failed {
		return r.err
	}
	return nil
}

// cstExport exports rdr (dropping our reference) into C memory.
func cstExport(t *testing.T, rdr array.RecordReader) *abi.ArrayStream {
	t.Helper()
	s := testsupport.OffHeap[abi.ArrayStream](t)
	err := stream.ExportReader(rdr, s)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cstReader(t *testing.T, recs []arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(cstSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

func cstDrain(t *testing.T, s *abi.ArrayStream, expect int) (n, rows int64, msg string) {
	t.Helper()
	out := cstInt64(t)
	n = int64(int(cstFn(t, "st_drain")(cstPtr(s), uintptr(expect), cstPtr(out))))
	return n, *out, ffi.GoString(cstFn(t, "st_last_error")())
}

func TestCConsumerDrain(t *testing.T) {
	for _, c := range []struct {
		name                string
		batches, rows, skip int
	}{{"batches", 6, 9, 0}, {"sliced", 4, 11, 3}, {"no batches", 0, 5, 0}, {"zero rows", 3, 0, 0}} {
		t.Run(c.name, func(t *testing.T) {
			cstNoLeaks(t)
			s := cstExport(t, cstReader(t, cstBatches(t, c.batches, c.rows, c.skip)))
			n, rows, msg := cstDrain(t, s, c.batches)
			if n != int64(c.batches) || rows != int64(c.batches*c.rows) {
				t.Errorf("st_drain = %d (%d rows), want %d (%d rows): %s", n, rows, c.batches, c.batches*c.rows, msg)
			}
			if !s.Released() {
				t.Error("the C consumer's release did not mark the stream released")
			}
		})
	}
}

// Errors of a Go source reach the C consumer as errno-style codes with the
// Go message from get_last_error.
func TestCConsumerGoError(t *testing.T) {
	for _, c := range []struct {
		name      string
		failAfter int
		err       error
		code      cdevice.Errno
	}{
		{"plain", 2, errors.New("go source broke after 2 batches"), cdevice.EIO},
		{"at once", 0, errors.New("go source broke at once"), cdevice.EIO},
		{"invalid", 1, fmt.Errorf("bad batch from the source: %w", cdevice.ErrInvalid), cdevice.EINVAL},
		{"errno", 1, fmt.Errorf("writing the spill file: %w", syscall.ENOSPC), cdevice.ENOSPC},
	} {
		t.Run(c.name, func(t *testing.T) {
			cstNoLeaks(t)
			src := &cstFailingReader{recs: cstBatches(t, 5, 4, 0), failAfter: c.failAfter, err: c.err}
			src.refs.Store(1)
			s := cstExport(t, src)
			n, _, msg := cstDrain(t, s, 5)
			if n != -int64(c.code) {
				t.Errorf("st_drain = %d, want %d (-%s): %s", n, -int64(c.code), c.code, msg)
			}
			if !strings.Contains(msg, c.err.Error()) {
				t.Errorf("get_last_error %q does not contain %q", msg, c.err.Error())
			}
			if r := src.refs.Load(); r != 0 {
				t.Errorf("the source has %d references after release", r)
			}
		})
	}
}

// Our exported stream driven through C function-pointer calls: the end is
// a released array, again and again; get_last_error is NULL until an error
// and holds the message after one; calls after release are refused.
func TestCConsumerRawCalls(t *testing.T) {
	t.Run("end", func(t *testing.T) {
		cstNoLeaks(t)
		getNext, lastErr := cstFn(t, "st_get_next_raw"), cstFn(t, "st_get_last_error_raw")
		getSchema, release, releaseArray := cstFn(t, "st_get_schema_raw"), cstFn(t, "st_release_raw"), cstFn(t, "st_release_array")
		s := cstExport(t, cstReader(t, cstBatches(t, 2, 3, 0)))
		out, sch := testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.Schema](t)
		if p := lastErr(cstPtr(s)); p != 0 {
			t.Errorf("get_last_error before any call = %q, want NULL", ffi.GoString(p))
		}
		for i := range 6 {
			out.Release = 1 // garbage: the end must overwrite it
			if rc := int32(getNext(cstPtr(s), cstPtr(out))); rc != 0 {
				t.Fatalf("get_next #%d = %d: %s", i+1, rc, ffi.GoString(lastErr(cstPtr(s))))
			}
			if i < 2 {
				if out.Released() || out.Length != 3 {
					t.Fatalf("get_next #%d: released %v, length %d", i+1, out.Released(), out.Length)
				}
				releaseArray(cstPtr(out))
			} else if !out.Released() {
				t.Fatalf("get_next #%d after the end: release is set", i+1)
			}
		}
		if p := lastErr(cstPtr(s)); p != 0 {
			t.Errorf("get_last_error after a clean end = %q, want NULL", ffi.GoString(p))
		}
		if rc := int32(getSchema(cstPtr(s), cstPtr(sch))); rc != 0 || sch.Format == 0 || ffi.GoString(sch.Format) != "+s" {
			t.Errorf("get_schema after the end = %d, format %q", rc, ffi.GoString(sch.Format))
		}
		ffi.Call(sch.Release, cstPtr(sch))
		stale := testsupport.OffHeap[abi.ArrayStream](t)
		*stale = *s
		release(cstPtr(s))
		if !s.Released() {
			t.Fatal("release did not mark the stream released")
		}
		// The function pointers of a copy taken before release must refuse.
		if rc := int32(getNext(cstPtr(stale), cstPtr(out))); rc == 0 {
			t.Error("get_next after release succeeded")
		}
		if rc := int32(getSchema(cstPtr(stale), cstPtr(sch))); rc == 0 {
			ffi.Call(sch.Release, cstPtr(sch))
			t.Error("get_schema after release succeeded")
		}
	})
	t.Run("error", func(t *testing.T) {
		cstNoLeaks(t)
		getNext, lastErr, release := cstFn(t, "st_get_next_raw"), cstFn(t, "st_get_last_error_raw"), cstFn(t, "st_release_raw")
		releaseArray := cstFn(t, "st_release_array")
		src := &cstFailingReader{recs: cstBatches(t, 3, 2, 0), failAfter: 1, err: errors.New("boom from Go")}
		src.refs.Store(1)
		s := cstExport(t, src)
		out := testsupport.OffHeap[abi.Array](t)
		if rc := int32(getNext(cstPtr(s), cstPtr(out))); rc != 0 {
			t.Fatalf("get_next #1 = %d", rc)
		}
		releaseArray(cstPtr(out))
		for i := range 2 {
			if rc := int32(getNext(cstPtr(s), cstPtr(out))); rc != int32(cdevice.EIO) {
				t.Errorf("get_next #%d = %d, want EIO", i+2, rc)
			}
			if msg := ffi.GoString(lastErr(cstPtr(s))); !strings.Contains(msg, "boom from Go") {
				t.Errorf("get_last_error = %q", msg)
			}
		}
		release(cstPtr(s))
	})
}

// cstGuardReader notices overlapping calls: our exported stream must
// serialize C threads calling get_next at once.
type cstGuardReader struct {
	array.RecordReader
	inside, overlaps atomic.Int64
}

func (g *cstGuardReader) Next() bool {
	if g.inside.Add(1) > 1 {
		g.overlaps.Add(1)
	}
	defer g.inside.Add(-1)
	time.Sleep(50 * time.Microsecond) // widen the window for a second caller
	return g.RecordReader.Next()
}

func TestCConsumerConcurrentGetNext(t *testing.T) {
	cstNoLeaks(t)
	const batches, threads, each = 40, 8, 10
	g := &cstGuardReader{RecordReader: cstReader(t, cstBatches(t, batches, 3, 0))}
	s := cstExport(t, g)
	if got := int64(int(cstFn(t, "st_concurrent_get_next")(cstPtr(s), threads, each))); got != batches {
		t.Errorf("st_concurrent_get_next = %d, want %d batches, each once", got, batches)
	}
	if n := g.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping Next calls on the source", n)
	}
	cstFn(t, "st_release_raw")(cstPtr(s))
}

// ---- device streams ----------------------------------------------------

func TestCProducerDeviceStreamCPU(t *testing.T) {
	const batches, rows = 3, 6
	mk := func(t *testing.T, failAt int) *stream.DeviceReader {
		s := testsupport.OffHeap[abi.DeviceArrayStream](t)
		if rc := int32(cstFn(t, "st_make_device_stream_cpu")(cstPtr(s), batches, rows, uintptr(failAt))); rc != 0 {
			t.Fatalf("st_make_device_stream_cpu = %d", rc)
		}
		r, err := stream.ImportDeviceStream(s)
		if err != nil {
			t.Fatal(err)
		}
		if r.DeviceType() != abi.DeviceCPU {
			t.Errorf("DeviceType %s, want cpu", r.DeviceType())
		}
		cstCheckSchema(t, r.Schema())
		return r
	}
	t.Run("HostRecords", func(t *testing.T) {
		cstNoLeaks(t)
		r := mk(t, -1)
		n := 0
		for rec, err := range r.HostRecords(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			cstCheckBatch(t, n, rows, rec)
			n++
		}
		if n != batches {
			t.Errorf("%d batches, want %d", n, batches)
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
	// A batch is valid in the loop body and released after it, unless
	// retained there: then it outlives the loop and the reader.
	t.Run("HostRecords/retained", func(t *testing.T) {
		cstNoLeaks(t)
		r := mk(t, -1)
		var kept arrow.RecordBatch
		n := 0
		for rec, err := range r.HostRecords(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				rec.Retain()
				kept = rec
			}
			n++
		}
		r.Release()
		if kept == nil {
			t.Fatalf("%d batches", n)
		}
		cstCheckBatch(t, 1, rows, kept)
		kept.Release()
	})
	t.Run("Next", func(t *testing.T) {
		cstNoLeaks(t)
		r := mk(t, -1)
		ctx := context.Background()
		for n := 0; ; n++ {
			b, err := r.Next(ctx)
			if err == io.EOF {
				if n != batches {
					t.Errorf("%d batches, want %d", n, batches)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := b.Device(); d == nil || d.Type() != abi.DeviceCPU || b.Length != rows {
				t.Errorf("batch %d: device %v, length %d", n, d, b.Length)
			}
			rec, err := b.ToHost(ctx)
			b.Release()
			if err != nil {
				t.Fatal(err)
			}
			cstCheckBatch(t, n, rows, rec)
			rec.Release()
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
	t.Run("error", func(t *testing.T) {
		cstNoLeaks(t)
		r := mk(t, 2)
		n := 0
		var err error
		for rec, e := range r.HostRecords(context.Background()) {
			if e != nil {
				err = e
				break
			}
			cstCheckBatch(t, n, rows, rec)
			n++
		}
		var pe *cdevice.ProducerError
		if n != 1 || !errors.As(err, &pe) || pe.Code != int(cdevice.EIO) || pe.Message != "injected failure at batch 2" {
			t.Errorf("%d batches, error %v; want 1 and EIO \"injected failure at batch 2\"", n, err)
		}
		r.Release()
		cstWantLive(t, 0, "after Release")
	})
}

// A reader whose producer blocks in get_next returns the context's error
// as soon as the context is done; the blocked call finishes in the
// background once the producer goes on, and everything it made, the batch
// and the stream, is released then, after the reader's own Release.
func TestCProducerBlockedContext(t *testing.T) {
	const batches, rows = 3, 6
	gate, blocked := cstFn(t, "st_gate"), cstFn(t, "st_gate_blocked_calls")
	defer gate(0)
	// ends runs next with the gate shut, reading one batch first, and
	// returns next's error for a context that times out.
	ends := func(t *testing.T, next func(context.Context) error) {
		t.Helper()
		if err := next(context.Background()); err != nil {
			t.Fatalf("first batch: %v", err)
		}
		gate(1)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read with the producer blocked: %v, want context.DeadlineExceeded", err)
		}
		// Promptly: a generous bound, not a timing target.
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("returned after %v", el)
		}
		if n := int64(blocked()); n != 1 {
			t.Errorf("%d get_next calls blocked at the gate, want the abandoned one", n)
		}
		if err := next(context.Background()); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("read after the context ended the stream: %v, want its error again", err)
		}
	}
	// release releases the reader while the call is blocked, checks the
	// producer is not released under it, then opens the gate and waits for
	// everything to be given back.
	release := func(t *testing.T, r interface{ Release() }) {
		t.Helper()
		r.Release()
		if n := cstLive(t); n != 1 {
			t.Errorf("%d C structs live with get_next blocked, want the stream alone", n)
		}
		gate(0)
		settle.Eventually(func() bool { return cstLive(t) == 0 })
		cstWantLive(t, 0, "after the blocked call returned")
	}
	t.Run("Reader", func(t *testing.T) {
		cstNoLeaks(t)
		r := cstImport(t, cstMakeStream(t, batches, rows, false, -1, false))
		ends(t, func(ctx context.Context) error {
			for rec, err := range r.All(ctx) {
				if err != nil {
					return err
				}
				cstCheckBatch(t, 0, rows, rec)
				return nil
			}
			return io.EOF
		})
		release(t, r)
	})
	t.Run("DeviceReader", func(t *testing.T) {
		cstNoLeaks(t)
		s := testsupport.OffHeap[abi.DeviceArrayStream](t)
		if rc := int32(cstFn(t, "st_make_device_stream_cpu")(cstPtr(s), batches, rows, cstNever)); rc != 0 {
			t.Fatalf("st_make_device_stream_cpu = %d", rc)
		}
		r, err := stream.ImportDeviceStream(s)
		if err != nil {
			t.Fatal(err)
		}
		ends(t, func(ctx context.Context) error {
			b, err := r.Next(ctx)
			if err == nil {
				b.Release()
			}
			return err
		})
		release(t, r)
	})
}

// cstOpenCL returns the first OpenCL device and opencl_peer.c initialised on
// the library the backend loaded; it skips without one (fails in CI).
func cstOpenCL(t *testing.T) (*opencl.Device, func(string) func(...uintptr) uintptr) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	info, err := opencl.Backend.Probe(context.Background())
	if err != nil || len(info.Devices) == 0 {
		skip("opencl: no device: %v", err)
	}
	lib := ctest.Library(t, "opencl_peer")
	f := func(name string) func(...uintptr) uintptr { return ctest.Func(t, lib, name) }
	ctest.InitRuntime(t, lib, "peer_init", info.Library)
	return info.Devices[0].(*opencl.Device), f
}

// A C producer's OpenCL stream: every batch's data is written behind a gate
// that opens a little later, so the import must wait on each sync_event.
func TestCProducerDeviceStreamOpenCL(t *testing.T) {
	cstNoLeaks(t)
	dev, f := cstOpenCL(t)
	const batches, rows = 4, 1000
	svm := uintptr(0)
	if dev.UsesSVM() {
		svm = 1
	}
	s := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(f("peer_make_device_stream")(cstPtr(s), dev.Context(), dev.CommandQueue(), svm, uintptr(dev.ID()), batches, rows)); rc != 0 {
		t.Fatalf("peer_make_device_stream = %d", rc)
	}
	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.DeviceType() != abi.DeviceOpenCL {
		t.Errorf("DeviceType %s, want opencl", r.DeviceType())
	}
	want := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if !r.Schema().Equal(want) {
		t.Errorf("schema %s, want %s", r.Schema(), want)
	}
	n := 0
	for rec, err := range r.HostRecords(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		vals := rec.Column(0).(*array.Int32).Int32Values()
		if len(vals) != rows {
			t.Errorf("batch %d: %d values", n, len(vals))
		}
		for i, v := range vals {
			if v != int32(n*rows+i) {
				t.Errorf("batch %d value %d = %d, want %d", n, i, v, n*rows+i)
				break
			}
		}
		n++
	}
	if n != batches {
		t.Errorf("%d batches, want %d", n, batches)
	}
	r.Release()
	if live := int64(int(f("peer_stream_live_count")())); live != 0 {
		t.Errorf("%d OpenCL stream structs live after Release", live)
	}
}

// A Go reader copied onto the CPU device batch by batch, drained by C.
func TestCConsumerDeviceStreamCPU(t *testing.T) {
	drain := func(t *testing.T, s *abi.DeviceArrayStream, expect int) (int64, int64, string) {
		out := cstInt64(t)
		n := int64(int(cstFn(t, "st_drain_device_cpu")(cstPtr(s), uintptr(expect), cstPtr(out))))
		return n, *out, ffi.GoString(cstFn(t, "st_last_error")())
	}
	t.Run("ExportReaderToDevice", func(t *testing.T) {
		cstNoLeaks(t)
		const batches, rows = 5, 8
		s := testsupport.OffHeap[abi.DeviceArrayStream](t)
		rdr := cstReader(t, cstBatches(t, batches, rows, 2))
		err := stream.ExportReaderToDevice(context.Background(), rdr, device.CPU, s)
		rdr.Release()
		if err != nil {
			t.Fatal(err)
		}
		if n, got, msg := drain(t, s, batches); n != batches || got != batches*rows {
			t.Errorf("st_drain_device_cpu = %d (%d rows), want %d (%d rows): %s", n, got, batches, batches*rows, msg)
		}
	})
	t.Run("ExportDeviceStream error", func(t *testing.T) {
		cstNoLeaks(t)
		recs := cstBatches(t, 2, 5, 0)
		seq := func(yield func(*cdevice.DeviceRecordBatch, error) bool) {
			for _, rec := range recs {
				b, err := cdevice.CopyRecordBatchToDevice(context.Background(), rec, device.CPU)
				if !yield(b, err) || err != nil {
					return
				}
			}
			yield(nil, errors.New("device source gave out"))
		}
		s := testsupport.OffHeap[abi.DeviceArrayStream](t)
		if err := stream.ExportDeviceStream(cstSchema, abi.DeviceCPU, seq, s); err != nil {
			t.Fatal(err)
		}
		if n, _, msg := drain(t, s, 5); n != -int64(cdevice.EIO) || !strings.Contains(msg, "device source gave out") {
			t.Errorf("st_drain_device_cpu = %d (%q), want -EIO with the Go message", n, msg)
		}
	})
}
