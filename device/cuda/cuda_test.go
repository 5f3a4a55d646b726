package cuda_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
)

// fake is the C test double (testdata/c/fakecudart.c), loaded by the same
// path the backend under test loads, so both share one copy and its state.
type fake struct {
	t    *testing.T
	path string
	lib  *ffi.Library
}

// newFake resets the double and gives it n devices. Tests of the double
// share its state, so none of them runs in parallel.
func newFake(t *testing.T, name string, n int) *fake {
	t.Helper()
	path := ctest.Path(t, name)
	lib, err := ffi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, path: path, lib: lib}
	f.call("fake_cuda_reset")
	f.call("fake_cuda_set_devices", uintptr(n))
	return f
}

func (f *fake) call(name string, args ...uintptr) uintptr {
	f.t.Helper()
	fn, err := f.lib.Symbol(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return ffi.Call(fn, args...)
}

// withString calls name with s as a C string first argument.
func (f *fake) withString(name, s string, args ...uintptr) uintptr {
	f.t.Helper()
	cs, err := ffi.CString(s)
	if err != nil {
		f.t.Fatal(err)
	}
	defer ffi.Free(cs)
	return f.call(name, append([]uintptr{uintptr(cs)}, args...)...)
}

// fail makes call fail once with code after n successful calls.
func (f *fake) fail(call string, code, n int) {
	f.withString("fake_cuda_fail", call, uintptr(code), uintptr(n))
}

func (f *fake) calls(call string) int64 { return int64(f.withString("fake_cuda_call_count", call)) }
func (f *fake) pending() int64          { return int64(f.call("fake_cuda_pending_ops")) }
func (f *fake) lastKind() int           { return int(int32(f.call("fake_cuda_last_memcpy_kind"))) }

func (f *fake) live() (allocs, events, streams int64) {
	return int64(f.call("fake_cuda_live_allocations")), int64(f.call("fake_cuda_live_events")),
		int64(f.call("fake_cuda_live_streams"))
}

func (f *fake) wantLive(allocs, events, streams int64) {
	f.t.Helper()
	if a, e, s := f.live(); a != allocs || e != events || s != streams {
		f.t.Errorf("live allocations, events, streams = %d, %d, %d; want %d, %d, %d", a, e, s, allocs, events, streams)
	}
}

// probe probes a fresh backend on the double; at the end of the test it
// destroys the default streams and checks that nothing leaked, neither in
// the double nor on the C heap.
func (f *fake) probe() []*cuda.Device {
	f.t.Helper()
	heap := ffi.LiveAllocations()
	b := cuda.NewTestBackend(f.path)
	info, err := b.Probe(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		if err := cuda.CloseBackend(b); err != nil {
			f.t.Error(err)
		}
		f.wantLive(0, 0, 0)
		if p := f.pending(); p != 0 {
			f.t.Errorf("%d copies still queued", p)
		}
		if n := ffi.LiveAllocations(); n != heap {
			f.t.Errorf("C heap blocks: %d, want %d", n, heap)
		}
	})
	var ds []*cuda.Device
	for _, d := range info.Devices {
		ds = append(ds, d.(*cuda.Device))
	}
	return ds
}

func wantRuntimeError(t *testing.T, err error, call string, code int, msg string) {
	t.Helper()
	if !errors.Is(err, device.ErrRuntime) {
		t.Fatalf("error %v is not ErrRuntime", err)
	}
	var re *device.RuntimeError
	if !errors.As(err, &re) {
		t.Fatalf("error %v holds no RuntimeError", err)
	}
	if re.Runtime != "cuda" || re.Call != call || re.Code != code || re.Message != msg {
		t.Fatalf("RuntimeError %+v; want cuda %s %d %q", *re, call, code, msg)
	}
}

// Not inlined: go1.26.8's compiler crashes (disjointTypes: "one of
// arguments is not a pointer") on a copy of constant size into it.
//
//go:noinline
func hostBytes(p device.Pointer, n int) []byte {
	return unsafe.Slice((*byte)(abi.Pointer(uintptr(p))), n)
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

var kinds = []struct {
	kind       abi.DeviceType
	alloc      string
	free       string
	accessible bool
}{
	{abi.DeviceCUDA, "cudaMalloc", "cudaFree", false},
	{abi.DeviceCUDAHost, "cudaMallocHost", "cudaFreeHost", true},
	{abi.DeviceCUDAManaged, "cudaMallocManaged", "cudaFree", true},
}

func TestProbe(t *testing.T) {
	f := newFake(t, "fakecudart", 2)
	b := cuda.NewTestBackend(f.path)
	info, err := b.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.CloseBackend(b)
	if info.Library != f.path || info.Version != "runtime 12.8, driver 12.9" {
		t.Errorf("Library %q, Version %q", info.Library, info.Version)
	}
	if len(info.Devices) != 6 {
		t.Fatalf("%d devices, want 3 for each of 2", len(info.Devices))
	}
	for i, dd := range info.Devices {
		d := dd.(*cuda.Device)
		n, k := i/3, kinds[i%3]
		if d.Kind() != k.kind || d.Type() != k.kind || d.Ordinal() != n || d.ID() != int64(n) || d.HostAccessible() != k.accessible {
			t.Errorf("device %d: %v kind %v ordinal %d host %v", i, d, d.Kind(), d.Ordinal(), d.HostAccessible())
		}
		if !strings.HasPrefix(d.Name(), fmt.Sprintf("Fake CUDA Device %d", n)) {
			t.Errorf("device %d: name %q", i, d.Name())
		}
		if maj, min := d.ComputeCapability(); maj != 9 || min != 0 {
			t.Errorf("compute capability %d.%d", maj, min)
		}
		// The default stream is non-blocking and on its own device.
		s := cuda.DefaultStream(d)
		if fl, dev := int32(f.call("fake_cuda_stream_flags", s)), int32(f.call("fake_cuda_stream_device", s)); fl != 1 || dev != int32(n) {
			t.Errorf("default stream of %v: flags %d, device %d", d, fl, dev)
		}
	}
	if got := info.Devices[3].Name(); got != "Fake CUDA Device 1" {
		t.Errorf("name %q", got)
	}
	if got := info.Devices[4].Name(); got != "Fake CUDA Device 1 (pinned host memory)" {
		t.Errorf("name %q", got)
	}
	if n := f.calls("cudaGetDeviceProperties_v2"); n != 2 {
		t.Errorf("cudaGetDeviceProperties_v2 called %d times, want it preferred, once a device", n)
	}
	f.wantLive(0, 0, 2)

	// Cached: a second probe asks the runtime nothing.
	again, err := b.Probe(context.Background())
	if err != nil || !slices.Equal(again.Devices, info.Devices) || again.Version != info.Version {
		t.Errorf("second probe: %v %v", again, err)
	}
	if n := f.calls("cudaGetDeviceCount"); n != 1 {
		t.Errorf("cudaGetDeviceCount called %d times", n)
	}
	if err := cuda.CloseBackend(b); err != nil {
		t.Fatal(err)
	}
	f.wantLive(0, 0, 0)
}

func TestProbeCanceled(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	b := cuda.NewTestBackend(f.path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled probe: %v", err)
	}
	if f.calls("cudaGetDeviceCount") != 0 {
		t.Fatal("a canceled probe called the runtime")
	}
	if _, err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	cuda.CloseBackend(b)
}

func TestRegistered(t *testing.T) {
	if !slices.Contains(device.Backends(), cuda.Backend) || cuda.Backend.Name() != "cuda" {
		t.Fatal("cuda.Backend is not registered")
	}
	f := newFake(t, "fakecudart", 1)
	b := cuda.NewRegisteringTestBackend(f.path)
	info, err := b.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.CloseBackend(b)
	for _, d := range info.Devices {
		got, err := device.Lookup(d.Type(), d.ID())
		if err != nil || got != d {
			t.Errorf("Lookup(%v, %d) = %v, %v", d.Type(), d.ID(), got, err)
		}
	}
}

func TestErrorName(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	if got := d.ErrorName(2); got != "cudaErrorMemoryAllocation" {
		t.Errorf("ErrorName(2) = %q", got)
	}
}

func TestAllocFree(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	ds := f.probe()
	for i, k := range kinds {
		d := ds[i]
		free0, total, err := d.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		p, err := d.Alloc(1000)
		if err != nil {
			t.Fatal(err)
		}
		f.wantLive(1, 0, 1)
		free1, _, _ := d.MemoryInfo()
		switch k.kind {
		case abi.DeviceCUDAHost:
			if free0 != 0 || total != 0 || free1 != 0 {
				t.Errorf("%v: MemoryInfo %d %d, want zeros for host memory", d, free0, total)
			}
		default:
			if total <= 0 || free0 != total || free0-free1 != 1000 {
				t.Errorf("%v: MemoryInfo before %d/%d, after %d", d, free0, total, free1)
			}
		}
		if k.accessible {
			m := hostBytes(p, 1000)
			copy(m, pattern(1000, 3))
			if !bytes.Equal(m, pattern(1000, 3)) {
				t.Errorf("%v: host access", d)
			}
		}
		if err := d.Free(p); err != nil {
			t.Fatal(err)
		}
		f.wantLive(0, 0, 1)
		// A second free is the runtime's error, not a crash.
		wantRuntimeError(t, d.Free(p), k.free, 1, "invalid argument")
	}

	// Each kind frees with its own call: cudaFree refuses pinned host memory.
	p, err := ds[1].Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	wantRuntimeError(t, ds[0].Free(p), "cudaFree", 1, "invalid argument")
	if err := ds[1].Free(p); err != nil {
		t.Fatal(err)
	}
	if err := ds[0].Free(0); err != nil {
		t.Errorf("Free(0): %v", err)
	}

	if _, err := ds[0].Alloc(0); err == nil || errors.Is(err, device.ErrRuntime) {
		t.Errorf("Alloc(0): %v", err)
	}
	// More than the double's device memory: the runtime's own refusal.
	_, err = ds[0].Alloc(int(min(uint64(1)<<40, uint64(math.MaxInt))))
	wantRuntimeError(t, err, "cudaMalloc", 2, "out of memory")
}

func TestCopies(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	ds := f.probe()
	src := pattern(64, 1)
	for _, d := range ds {
		explicit := d.Kind() == abi.DeviceCUDA
		want := func(kind int) {
			t.Helper()
			if !explicit {
				kind = 4 // cudaMemcpyDefault
			}
			if got := f.lastKind(); got != kind {
				t.Errorf("%v: cudaMemcpyKind %d, want %d", d, got, kind)
			}
		}
		a, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		// Two halves at offsets, a device-to-device copy between offsets,
		// and back at an offset.
		if err := d.CopyToDevice(a, 0, src[:32], s); err != nil {
			t.Fatal(err)
		}
		want(1)
		if err := d.CopyToDevice(a, 32, src[32:], s); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyOnDevice(b, 8, a, 16, 40, s); err != nil {
			t.Fatal(err)
		}
		want(3)
		dst := make([]byte, 40)
		if err := d.CopyToHost(dst, b, 8, s); err != nil {
			t.Fatal(err)
		}
		want(2)
		whole := make([]byte, 64)
		if err := d.CopyToHost(whole, a, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src[16:56]) || !bytes.Equal(whole, src) {
			t.Errorf("%v: copies gave %v / %v", d, dst, whole)
		}

		// The default stream (nil), waited on through an event.
		back := make([]byte, 10)
		if err := d.CopyToDevice(a, 5, src[50:60], nil); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(back, a, 5, nil); err != nil {
			t.Fatal(err)
		}
		ev, err := d.NewEvent()
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(nil); err != nil {
			t.Fatal(err)
		}
		if err := ev.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, src[50:60]) {
			t.Errorf("%v: default stream copies gave %v", d, back)
		}

		// A range past the allocation is the runtime's error.
		wantRuntimeError(t, d.CopyToDevice(a, 60, src[:8], s), "cudaMemcpyAsync", 1, "invalid argument")
		// Empty copies do nothing; bad arguments are refused before the runtime.
		if err := d.CopyToDevice(a, 0, nil, s); err != nil {
			t.Error(err)
		}
		if err := d.CopyOnDevice(b, -1, a, 0, 4, s); err == nil || errors.Is(err, device.ErrRuntime) {
			t.Errorf("negative offset: %v", err)
		}
		for _, c := range []interface{ Close() error }{ev, s} {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []device.Pointer{a, b} {
			if err := d.Free(p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Copies are queued: nothing is visible before a sync, and one stream does
// not see another's queued work.
func TestStreamOrdering(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	buf, err := d.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	s1, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if int32(f.call("fake_cuda_stream_flags", s1.Handle())) != 1 {
		t.Error("NewStream did not make a non-blocking stream")
	}

	src := pattern(256, 9)
	dst := make([]byte, 256)
	if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(dst, buf, 0, s1); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 2 || !bytes.Equal(dst, make([]byte, 256)) {
		t.Fatalf("before sync: %d queued, dst changed", f.pending())
	}
	// s2 reads buf while s1's write is still queued: stale device memory.
	other := make([]byte, 256)
	if err := d.CopyToHost(other, buf, 0, s2); err != nil {
		t.Fatal(err)
	}
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(other, bytes.Repeat([]byte{0xA5}, 256)) {
		t.Errorf("s2 saw s1's queued write: %v", other[:8])
	}
	if err := s1.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 0 || !bytes.Equal(dst, src) {
		t.Fatalf("after sync: %d queued, dst %v", f.pending(), dst[:8])
	}
}

func TestEvents(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	ds := f.probe()
	d, host := ds[0], ds[1]
	heap := ffi.LiveAllocations()
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer s1.Close()
	defer s2.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	p := ev.SyncEvent()
	if p == 0 || ffi.LiveAllocations() != heap+1 {
		t.Fatal("SyncEvent is not an off-heap cudaEvent_t*")
	}
	if fl := int32(f.call("fake_cuda_event_flags", *(*uintptr)(abi.Pointer(p)))); fl != 2 {
		t.Errorf("event flags %d, want cudaEventDisableTiming", fl)
	}
	f.wantLive(0, 1, 3)

	// s2 waits for s1's write through the sync event, without the host waiting.
	buf, _ := d.Alloc(128)
	defer d.Free(buf)
	src, dst := pattern(128, 5), make([]byte, 128)
	if err := d.CopyToDevice(buf, 0, src, s1); err != nil {
		t.Fatal(err)
	}
	if err := ev.Record(s1); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitSyncEvent(p, s2); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyToHost(dst, buf, 0, s2); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 3 {
		t.Errorf("%d queued, want copy, wait, copy", f.pending())
	}
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, src) || f.pending() != 0 {
		t.Errorf("after waiting on the event: %v, %d queued", dst[:8], f.pending())
	}

	// The host waits: Synchronize and WaitSyncEvent with a nil stream.
	hbuf, _ := host.Alloc(64)
	defer host.Free(hbuf)
	for i, wait := range []func() error{ev.Synchronize, func() error { return host.WaitSyncEvent(p, nil) }} {
		src := pattern(64, byte(40+i))
		if err := host.CopyToDevice(hbuf, 0, src, s1); err != nil {
			t.Fatal(err)
		}
		if err := ev.Record(s1); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(hostBytes(hbuf, 64), src) {
			t.Fatal("copy visible before the event was waited on")
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(hostBytes(hbuf, 64), src) {
			t.Errorf("wait %d: copy not visible after the event", i)
		}
	}

	if err := d.WaitSyncEvent(0, s1); err != nil {
		t.Errorf("WaitSyncEvent(NULL): %v", err)
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if ev.SyncEvent() != 0 || ev.Record(s1) == nil || ev.Synchronize() == nil {
		t.Error("event usable after Close")
	}
	if err := ev.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if ffi.LiveAllocations() != heap {
		t.Error("event slot not freed")
	}
	f.wantLive(2, 0, 3)
}

// A producer that is not Go (the double's functions called directly, as a
// C library would) hands over a cudaEvent_t*; the consumer waits on it.
func TestForeignSyncEvent(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if rc := int32(f.call("cudaSetDevice", 0)); rc != 0 {
		t.Fatal(rc)
	}
	cmem := func(n uintptr) unsafe.Pointer {
		p, err := ffi.Calloc(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ffi.Free(p) })
		return p
	}
	fstream, evSlot := cmem(8), cmem(8)
	if rc := int32(f.call("cudaStreamCreateWithFlags", uintptr(fstream), 0)); rc != 0 {
		t.Fatal(rc)
	}
	if rc := int32(f.call("cudaEventCreateWithFlags", uintptr(evSlot), 0)); rc != 0 {
		t.Fatal(rc)
	}
	fs, fev := *(*uintptr)(fstream), *(*uintptr)(evSlot)
	defer f.call("cudaStreamDestroy", fs)
	defer f.call("cudaEventDestroy", fev)

	buf, _ := d.Alloc(32)
	defer d.Free(buf)
	s, _ := d.NewStream()
	defer s.Close()
	for i, wait := range []func() error{
		func() error { return d.WaitSyncEvent(uintptr(evSlot), s) },
		func() error { return d.WaitSyncEvent(uintptr(evSlot), nil) },
	} {
		src, dst := cmem(32), make([]byte, 32)
		copy(unsafe.Slice((*byte)(src), 32), pattern(32, byte(i)))
		if rc := int32(f.call("cudaMemcpyAsync", uintptr(buf), uintptr(src), 32, 1, fs)); rc != 0 {
			t.Fatal(rc)
		}
		if rc := int32(f.call("cudaEventRecord", fev, fs)); rc != 0 {
			t.Fatal(rc)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(dst, buf, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, pattern(32, byte(i))) {
			t.Errorf("wait %d: consumer read %v", i, dst[:8])
		}
	}

	// A sync_event that points at a NULL cudaEvent_t is refused.
	null := cmem(8)
	if err := d.WaitSyncEvent(uintptr(null), s); err == nil {
		t.Error("NULL cudaEvent_t accepted")
	}
}

func TestStreamMisuse(t *testing.T) {
	f := newFake(t, "fakecudart", 2)
	ds := f.probe()
	d0, d1 := ds[0], ds[3]
	buf, _ := d0.Alloc(8)
	defer d0.Free(buf)
	cpuStream, _ := device.CPU.NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, cpuStream); err == nil || !strings.Contains(err.Error(), "not a CUDA stream") {
		t.Errorf("CPU stream: %v", err)
	}
	s1, _ := d1.NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, s1); err == nil || !strings.Contains(err.Error(), "device 1") {
		t.Errorf("stream of another device: %v", err)
	}
	// The host device and the device memory of one GPU share its streams.
	s0, _ := ds[1].NewStream()
	if err := d0.CopyToDevice(buf, 0, []byte{1}, s0); err != nil {
		t.Error(err)
	}
	for _, s := range []device.Stream{s0, s1} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s0.Handle() != 0 || s0.Synchronize() == nil || d0.CopyToDevice(buf, 0, []byte{1}, s0) == nil {
		t.Error("stream usable after Close")
	}
	if err := s0.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Two devices used from many goroutines: the double refuses work on another
// device than the thread's current one, so this fails unless every call
// sequence sets the device on a locked thread. Slow C calls on few Ps make
// the scheduler move goroutines between threads (it hands a P blocked in C
// to another thread), as real CUDA calls do.
func TestConcurrentDevices(t *testing.T) {
	f := newFake(t, "fakecudart", 2)
	ds := f.probe()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	f.call("fake_cuda_set_delay", 30)
	defer f.call("fake_cuda_set_delay", 0)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		d := ds[(g%2)*3+g/2%3]
		wg.Go(func() {
			for i := range 30 {
				if err := roundTrip(d, 512, byte(g+i)); err != nil {
					errs <- fmt.Errorf("%v: %w", d, err)
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.calls("cudaSetDevice"); n < 16*30*5 {
		t.Errorf("cudaSetDevice called %d times", n)
	}
}

// roundTrip copies a pattern to a new buffer and back on a new stream.
func roundTrip(d *cuda.Device, n int, seed byte) error {
	p, err := d.Alloc(n)
	if err != nil {
		return err
	}
	defer d.Free(p)
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	src, dst := pattern(n, seed), make([]byte, n)
	if err := d.CopyToDevice(p, 0, src, s); err != nil {
		return err
	}
	if err := d.CopyToHost(dst, p, 0, s); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if !bytes.Equal(src, dst) {
		return errors.New("data differs after a round trip")
	}
	return nil
}

func TestFaultAlloc(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	ds := f.probe()
	for i, k := range kinds {
		f.fail(k.alloc, 2, 0)
		_, err := ds[i].Alloc(100)
		wantRuntimeError(t, err, k.alloc, 2, "out of memory")
		f.wantLive(0, 0, 1)
	}
	// After n successful calls.
	f.fail("cudaMalloc", 2, 2)
	var ps []device.Pointer
	for range 3 {
		p, err := ds[0].Alloc(8)
		if err != nil {
			wantRuntimeError(t, err, "cudaMalloc", 2, "out of memory")
			break
		}
		ps = append(ps, p)
	}
	if len(ps) != 2 {
		t.Errorf("%d allocations before the fault, want 2", len(ps))
	}
	for _, p := range ps {
		ds[0].Free(p)
	}
	// A failing free keeps the memory; freeing again works.
	p, _ := ds[0].Alloc(8)
	f.fail("cudaFree", 1, 0)
	wantRuntimeError(t, ds[0].Free(p), "cudaFree", 1, "invalid argument")
	if err := ds[0].Free(p); err != nil {
		t.Fatal(err)
	}
	// The thread's device cannot be set.
	f.fail("cudaSetDevice", 101, 0)
	_, err := ds[0].Alloc(8)
	wantRuntimeError(t, err, "cudaSetDevice", 101, "invalid device ordinal")
	f.wantLive(0, 0, 1)
}

func TestFaultCopy(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	buf, _ := d.Alloc(16)
	defer d.Free(buf)
	s, _ := d.NewStream()
	defer s.Close()
	src, dst := pattern(16, 1), make([]byte, 16)
	f.fail("cudaMemcpyAsync", 1, 1)
	if err := d.CopyToDevice(buf, 0, src, s); err != nil {
		t.Fatal(err)
	}
	err := d.CopyToHost(dst, buf, 0, s)
	wantRuntimeError(t, err, "cudaMemcpyAsync", 1, "invalid argument")
	if !strings.Contains(err.Error(), "CopyToHost of 16 bytes") {
		t.Errorf("error lacks context: %v", err)
	}
	if f.pending() != 1 {
		t.Errorf("%d queued; the failed copy was queued", f.pending())
	}
	f.fail("cudaMemcpyAsync", 21, 0)
	wantRuntimeError(t, d.CopyOnDevice(buf, 0, buf, 8, 8, nil), "cudaMemcpyAsync", 21, "invalid copy direction for memcpy")
	f.fail("cudaStreamSynchronize", 400, 0)
	wantRuntimeError(t, s.Synchronize(), "cudaStreamSynchronize", 400, "invalid resource handle")
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func TestFaultEvents(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	heap := ffi.LiveAllocations()
	f.fail("cudaEventCreateWithFlags", 2, 0)
	_, err := d.NewEvent()
	wantRuntimeError(t, err, "cudaEventCreateWithFlags", 2, "out of memory")
	if ffi.LiveAllocations() != heap {
		t.Error("a failed NewEvent leaked its slot")
	}
	f.wantLive(0, 0, 1)

	ev, _ := d.NewEvent()
	s, _ := d.NewStream()
	defer s.Close()
	f.fail("cudaEventRecord", 400, 0)
	wantRuntimeError(t, ev.Record(s), "cudaEventRecord", 400, "invalid resource handle")
	if err := ev.Record(s); err != nil {
		t.Fatal(err)
	}
	f.fail("cudaEventSynchronize", 400, 0)
	wantRuntimeError(t, ev.Synchronize(), "cudaEventSynchronize", 400, "invalid resource handle")
	f.fail("cudaEventSynchronize", 400, 0)
	wantRuntimeError(t, d.WaitSyncEvent(ev.SyncEvent(), nil), "cudaEventSynchronize", 400, "invalid resource handle")
	f.fail("cudaStreamWaitEvent", 400, 0)
	wantRuntimeError(t, d.WaitSyncEvent(ev.SyncEvent(), s), "cudaStreamWaitEvent", 400, "invalid resource handle")
	// A failed destroy leaves the event whole, to close again.
	f.fail("cudaEventDestroy", 400, 0)
	wantRuntimeError(t, ev.Close(), "cudaEventDestroy", 400, "invalid resource handle")
	if ev.SyncEvent() == 0 {
		t.Fatal("event lost after a failed Close")
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if ffi.LiveAllocations() != heap {
		t.Error("event slot leaked")
	}
}

func TestFaultStreams(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	d := f.probe()[0]
	f.fail("cudaStreamCreateWithFlags", 2, 0)
	_, err := d.NewStream()
	wantRuntimeError(t, err, "cudaStreamCreateWithFlags", 2, "out of memory")
	f.wantLive(0, 0, 1)
	s, _ := d.NewStream()
	f.fail("cudaStreamDestroy", 400, 0)
	wantRuntimeError(t, s.Close(), "cudaStreamDestroy", 400, "invalid resource handle")
	if s.Handle() == 0 {
		t.Fatal("stream lost after a failed Close")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A probe that fails half way gives back what it made, and stays failed.
func TestFaultProbe(t *testing.T) {
	for _, c := range []struct {
		call string
		code int
		n    int
		msg  string
	}{
		{"cudaRuntimeGetVersion", 3, 0, "unrecognized error code"},
		{"cudaDriverGetVersion", 1, 0, "invalid argument"},
		{"cudaGetDeviceCount", 2, 0, "out of memory"},
		{"cudaGetDeviceProperties_v2", 101, 1, "invalid device ordinal"},
		{"cudaDeviceGetAttribute", 1, 2, "invalid argument"},
		{"cudaStreamCreateWithFlags", 2, 1, "out of memory"}, // the second device's default stream
		{"cudaSetDevice", 101, 1, "invalid device ordinal"},
	} {
		t.Run(c.call, func(t *testing.T) {
			f := newFake(t, "fakecudart", 2)
			f.fail(c.call, c.code, c.n)
			b := cuda.NewTestBackend(f.path)
			_, err := b.Probe(context.Background())
			wantRuntimeError(t, err, c.call, c.code, c.msg)
			f.wantLive(0, 0, 0)
			calls := f.calls("cudaRuntimeGetVersion")
			if _, again := b.Probe(context.Background()); again != err || f.calls("cudaRuntimeGetVersion") != calls {
				t.Errorf("second probe: %v", again)
			}
		})
	}
}

func TestNoDevice(t *testing.T) {
	f := newFake(t, "fakecudart", 0)
	info, err := cuda.NewTestBackend(f.path).Probe(context.Background())
	if !errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("zero devices: %v", err)
	}
	wantRuntimeError(t, err, "cudaGetDeviceCount", 100, "no CUDA-capable device is detected")
	if info.Library != f.path || info.Version == "" || len(info.Devices) != 0 {
		t.Errorf("info %+v", info)
	}
}

func TestDriverTooOld(t *testing.T) {
	f := newFake(t, "fakecudart", 1)
	f.call("fake_cuda_set_driver_version", 11080)
	info, err := cuda.NewTestBackend(f.path).Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "driver too old") || errors.Is(err, device.ErrNoDevice) {
		t.Fatalf("old driver: %v", err)
	}
	wantRuntimeError(t, err, "cudaGetDeviceCount", 35, "CUDA driver version is insufficient for CUDA runtime version")
	if info.Version != "runtime 12.8, driver 11.8" {
		t.Errorf("version %q", info.Version)
	}

	f = newFake(t, "fakecudart", 1)
	f.call("fake_cuda_set_driver_version", 0)
	_, err = cuda.NewTestBackend(f.path).Probe(context.Background())
	if !errors.Is(err, device.ErrNoDevice) || !strings.Contains(err.Error(), "no NVIDIA driver") {
		t.Fatalf("no driver: %v", err)
	}
}

func TestMissingSymbol(t *testing.T) {
	f := newFake(t, "fakecudart_old", 1)
	_, err := cuda.NewTestBackend(f.path).Probe(context.Background())
	if !errors.Is(err, device.ErrMissingSymbol) || errors.Is(err, device.ErrNotFound) {
		t.Fatalf("old runtime: %v", err)
	}
	// cudaGetDeviceProperties_v2 is missing too, but has a fallback.
	if msg := err.Error(); !strings.Contains(msg, "cudaMallocManaged") || strings.Contains(msg, "Properties") {
		t.Errorf("message %q", msg)
	}
}

func TestNotFound(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcudart.so.404")
	_, err := cuda.NewTestBackend(missing).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing library: %v", err)
	}
	if _, err := cuda.NewTestBackend().Probe(context.Background()); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("no candidates: %v", err)
	}
}

func TestCandidates(t *testing.T) {
	t.Setenv(cuda.EnvLibrary, "/opt/x/libcudart.so.12")
	if c := cuda.Candidates(); !slices.Equal(c, []string{"/opt/x/libcudart.so.12"}) {
		t.Errorf("with %s set: %v", cuda.EnvLibrary, c)
	}
	t.Setenv(cuda.EnvLibrary, "")
	c := cuda.Candidates()
	switch runtime.GOOS {
	case "linux":
		if len(c) < 4 || c[0] != "libcudart.so.13" || c[1] != "libcudart.so.12" {
			t.Errorf("candidates %v", c)
		}
	case "windows":
		if len(c) < 3 || c[0] != "cudart64_13.dll" {
			t.Errorf("candidates %v", c)
		}
	}
}

// A library that exists but does not load is named with the reason; one
// that is absent is only listed.
func TestNotFoundBroken(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "libcudart.so.12")
	if err := os.WriteFile(bad, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "libcudart.so.13")
	_, err := cuda.NewTestBackend(missing, bad).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) {
		t.Fatal(err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "tried "+missing+", "+bad) || !strings.Contains(msg, "cannot load") || strings.Count(msg, missing) != 1 {
		t.Errorf("message %q", msg)
	}
}
