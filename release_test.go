package cdevice_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// The Release functions on structs made by C (testdata/c: cdata.c counts
// every struct it makes and releases, stream.c its live producers, async.c
// how often a consumer's handler was released): each runs the struct's
// release exactly once, and nothing for a released struct or nil.

func TestReleaseSchemaAndArrayC(t *testing.T) {
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	if rc := ccall(t, "ct_make_int32", addr(s), addr(a), 10, 1); rc != 0 {
		t.Fatalf("ct_make_int32: %d", rc)
	}
	before := cReleases(t)
	cdevice.ReleaseArray(a)
	if got := cReleases(t) - before; got != 1 || !a.Released() {
		t.Fatalf("ReleaseArray: %d C releases, released %v; want 1, true", got, a.Released())
	}
	cdevice.ReleaseSchema(s)
	if got := cReleases(t) - before; got != 2 || !s.Released() {
		t.Fatalf("ReleaseSchema: %d C releases in all, released %v; want 2, true", got, s.Released())
	}
	cdevice.ReleaseArray(a)
	cdevice.ReleaseSchema(s)
	cdevice.ReleaseArray(nil)
	cdevice.ReleaseSchema(nil)
	if got := cReleases(t) - before; got != 2 {
		t.Fatalf("released structs and nil: %d C releases in all, want 2", got)
	}
}

func TestReleaseDeviceArrayC(t *testing.T) {
	d := testsupport.OffHeap[abi.DeviceArray](t)
	if rc := ccall(t, "ct_make_device_array_cpu", 0, addr(d)); rc != 0 {
		t.Fatalf("ct_make_device_array_cpu: %d", rc)
	}
	before := cReleases(t)
	cdevice.ReleaseDeviceArray(d)
	if got := cReleases(t) - before; got != 1 || !d.Array.Released() {
		t.Fatalf("ReleaseDeviceArray: %d C releases, released %v; want 1, true", got, d.Array.Released())
	}
	cdevice.ReleaseDeviceArray(d)
	cdevice.ReleaseDeviceArray(nil)
	if got := cReleases(t) - before; got != 1 {
		t.Fatalf("released struct and nil: %d C releases in all, want 1", got)
	}
}

func stFn(t testing.TB, name string) func(...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "stream"), name)
}

func TestReleaseStreamsC(t *testing.T) {
	live := func() int64 { return int64(int(stFn(t, "st_live_count")())) }
	before := live()

	s := testsupport.OffHeap[abi.ArrayStream](t)
	if rc := int32(stFn(t, "st_make_stream")(addr(s), 3, 5, 0, 0, 0)); rc != 0 {
		t.Fatalf("st_make_stream: %d", rc)
	}
	if got := live() - before; got != 1 {
		t.Fatalf("after st_make_stream: %d live producers, want 1", got)
	}
	cdevice.ReleaseArrayStream(s)
	if got := live() - before; got != 0 || !s.Released() {
		t.Fatalf("ReleaseArrayStream: %d live producers, released %v; want 0, true", got, s.Released())
	}
	cdevice.ReleaseArrayStream(s)
	cdevice.ReleaseArrayStream(nil)

	d := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if rc := int32(stFn(t, "st_make_device_stream_cpu")(addr(d), 3, 5, 0)); rc != 0 {
		t.Fatalf("st_make_device_stream_cpu: %d", rc)
	}
	cdevice.ReleaseDeviceArrayStream(d)
	if got := live() - before; got != 0 || !d.Released() {
		t.Fatalf("ReleaseDeviceArrayStream: %d live producers, released %v; want 0, true", got, d.Released())
	}
	cdevice.ReleaseDeviceArrayStream(d)
	cdevice.ReleaseDeviceArrayStream(nil)
	if got := live() - before; got != 0 {
		t.Fatalf("released streams and nil: %d live producers, want 0", got)
	}
}

func TestReleaseAsyncHandlerC(t *testing.T) {
	as := func(name string, args ...uintptr) uintptr {
		return ctest.Func(t, ctest.Library(t, "async"), name)(args...)
	}
	c := as("as_consumer_new", 1, ^uintptr(0), 1)
	if c == 0 {
		t.Fatal("as_consumer_new failed")
	}
	h := abi.At[abi.AsyncDeviceStreamHandler](as("as_consumer_handler", c))
	cdevice.ReleaseAsyncHandler(h)
	cdevice.ReleaseAsyncHandler(h)
	cdevice.ReleaseAsyncHandler(nil)
	if got := int(as("as_consumer_releases", c)); got != 1 || h.Release != 0 {
		t.Errorf("ReleaseAsyncHandler twice: %d C releases, release %#x; want 1, NULL", got, h.Release)
	}
	if rc := int32(as("as_consumer_wait", c, uintptr(20*time.Second/time.Millisecond))); rc != 0 {
		t.Errorf("as_consumer_wait: %d", rc)
	}
	if n := int(as("as_consumer_problems", c)); n != 0 {
		t.Errorf("consumer problems: %d", n)
	}
	as("as_consumer_free", c)
}

// Our own exports coming back: the Release functions run the Go release
// (the struct is released and every Go buffer it held is given back; the
// test binary's leak check sees no export left).
func TestReleaseOwnExports(t *testing.T) {
	mem := testsupport.CheckedAllocator(t)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 2, 3}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()

	s, a, d := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t), testsupport.OffHeap[abi.DeviceArray](t)
	if err := cdevice.ExportArray(arr, a, s); err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseArray(a)
	cdevice.ReleaseSchema(s)
	if !a.Released() || !s.Released() {
		t.Fatalf("own ArrowArray/ArrowSchema: released %v/%v", a.Released(), s.Released())
	}
	cdevice.ReleaseArray(a)
	cdevice.ReleaseSchema(s)

	if err := cdevice.ExportDeviceArray(arr, d, nil); err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseDeviceArray(d)
	if !d.Array.Released() {
		t.Fatal("own ArrowDeviceArray not released")
	}

	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rb := array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
	defer rb.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rb})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	st := testsupport.OffHeap[abi.ArrayStream](t)
	if err := stream.ExportReader(rdr, st); err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseArrayStream(st)
	if !st.Released() {
		t.Fatal("own ArrowArrayStream not released")
	}
	cdevice.ReleaseArrayStream(st)

	rdr2, err := array.NewRecordReader(sc, []arrow.RecordBatch{rb})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr2.Release()
	ds := testsupport.OffHeap[abi.DeviceArrayStream](t)
	if err := stream.ExportReaderToDevice(t.Context(), rdr2, device.CPU, ds); err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseDeviceArrayStream(ds)
	if !ds.Released() {
		t.Fatal("own ArrowDeviceArrayStream not released")
	}
	cdevice.ReleaseDeviceArrayStream(ds)

	h, err := async.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	cdevice.ReleaseAsyncHandler(h.C()) // frees h.C(): do not touch it after
	if _, err := h.Schema(t.Context()); err == nil {
		t.Fatal("a handler released before any schema gives no error")
	}
}
