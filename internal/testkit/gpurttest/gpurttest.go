// Package gpurttest is the one set of tests of package gpurt's runtimes,
// run by device/cuda and device/hip against their own tables: on the C
// test double of the runtime (testdata/c/fakecudart.c, compiled a second
// time with HIP's names by fakehip.c), on libraries that are not the
// runtime, and on the real runtime where there is one.
package gpurttest

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// A Runtime is what the tests need to know of a runtime package.
type Runtime struct {
	Table   *gpurt.Table
	Backend device.Backend // the package's registered Backend
	// Real is the backend the Real tests probe: one of Table alone, as the
	// package's Backend may serve through another API.
	Real device.Backend
	// Fake and OldFake name the test double in testdata/c, and the double
	// built as an old runtime (FAKE_CUDA_OLD), e.g. "fakecudart".
	Fake, OldFake string
	// Version is the Info.Version of the double; OldDriver is a driver
	// version older than its runtime, and OldVersion the Info.Version then.
	Version    string
	OldDriver  int
	OldVersion string
	// NewFake names the double built as a newer runtime than its default
	// driver supports (its device count answers InsufficientDriver until
	// fake_cuda_set_driver_version raises the driver), e.g. "fakecudart_new".
	NewFake string
	// NoHostFake names a double that lacks every allocator of the table's
	// pinned host memory, where that kind is Optional; "" where it is not.
	NoHostFake string
	// PropSize is the size of the runtime's properties struct that the
	// double writes; NoLegacyHandle: the double refuses the legacy
	// default-stream handle 1 (HIP before 6.2).
	PropSize       int
	NoLegacyHandle bool
}

// A Device is a runtime package's Device (or a *gpurt.Device, for a table
// without Wrap): device.Device and the methods the packages add.
type Device interface {
	device.Device
	device.ForeignStreams
	Ordinal() int
	DefaultStream() uintptr
	ErrorName(code int) string
}

// A test is one test of a runtime, run as a subtest.
type test struct {
	name string
	f    func(t *testing.T, rt Runtime)
}

var doubleTests = []test{
	{"Probe", testProbe},
	{"ProbeCanceled", testProbeCanceled},
	{"Registered", testRegistered},
	{"AllocFree", testAllocFree},
	{"Copies", testCopies},
	{"StreamOrdering", testStreamOrdering},
	{"Events", testEvents},
	{"ForeignSyncEvent", testForeignSyncEvent},
	{"ReadValues", testReadValues},
	{"ForeignStreams", testForeignStreams},
	{"DefaultStreamHandles", testDefaultStreamHandles},
	{"PropertiesSize", testPropertiesSize},
	{"CopyBaseline", testCopyBaseline},
	{"EveryCallFails", testEveryCallFails},
	{"StreamMisuse", testStreamMisuse},
	{"ConcurrentDevices", testConcurrentDevices},
	{"FaultAlloc", testFaultAlloc},
	{"FaultCopy", testFaultCopy},
	{"FaultEvents", testFaultEvents},
	{"FaultStreams", testFaultStreams},
	{"HostWaitContext", testHostWaitContext},
	{"UnrecordedEvent", testUnrecordedEvent},
	{"FaultProbe", testFaultProbe},
	{"NoDevice", testNoDevice},
	{"DriverTooOld", testDriverTooOld},
	{"OldRuntime", testOldRuntime},
	{"SkipTooNew", testSkipTooNew},
	{"HostAllocFallback", testHostAllocFallback},
	{"NotTheRuntime", testNotTheRuntime},
	{"NotFound", testNotFound},
	{"NotFoundBroken", testNotFoundBroken},
	{"ExplicitLibraryMissing", testExplicitLibraryMissing},
	{"ExplicitLibraryUnloadable", testExplicitLibraryUnloadable},
}

// Run runs every test of the runtime on its test double and on libraries
// that are not the runtime. Tests of the double share its state, so none
// of them runs in parallel.
func Run(t *testing.T, rt Runtime) { run(t, rt, doubleTests) }

// RunReal runs the tests of real devices (see RealDevices).
func RunReal(t *testing.T, rt Runtime) { run(t, rt, realTests) }

func run(t *testing.T, rt Runtime, tests []test) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, rt) })
	}
}

// sym is the (preferred) symbol of op.
func (rt Runtime) sym(op gpurt.Op) string { return rt.Table.Names(op)[0] }

// driver reports whether the table is CUDA's driver API.
func (rt Runtime) driver() bool { return rt.Table.API == gpurt.DriverAPI }

// copySym is the function a copy of direction kind (one of Table.Memcpy's)
// to or from memory m calls: the driver API has one per direction, and
// memory other than device memory is copied with the direction inferred.
func (rt Runtime) copySym(m gpurt.Memory, kind uintptr) string {
	mk := rt.Table.Memcpy
	if m != gpurt.DeviceMemory {
		kind = mk.Default
	}
	if rt.driver() {
		switch kind {
		case mk.HostToDevice:
			return rt.sym(gpurt.MemcpyHtoDAsync)
		case mk.DeviceToHost:
			return rt.sym(gpurt.MemcpyDtoHAsync)
		case mk.DeviceToDevice:
			return rt.sym(gpurt.MemcpyDtoDAsync)
		}
	}
	return rt.sym(gpurt.MemcpyAsync)
}

// countSym is the call whose error says why there is no device:
// GetDeviceCount, or the driver API's Init.
func (rt Runtime) countSym() string {
	if rt.driver() {
		return rt.sym(gpurt.Init)
	}
	return rt.sym(gpurt.GetDeviceCount)
}

// nameSym is the call that reads a GPU's name.
func (rt Runtime) nameSym() string {
	if rt.driver() {
		return rt.sym(gpurt.DeviceGetName)
	}
	return rt.sym(gpurt.GetDeviceProperties)
}

// kind returns the index in the table's kinds of the first of memory m, or -1.
func (rt Runtime) kind(m gpurt.Memory) int {
	for i, k := range rt.Table.Kinds {
		if k.Memory == m {
			return i
		}
	}
	return -1
}

// backend is a fresh, unregistered backend that tries only paths.
func (rt Runtime) backend(paths ...string) *gpurt.Backend {
	return gpurt.NewBackend(false, gpurt.Source{Table: rt.Table, Candidates: gpurt.Paths(paths...)})
}

// A Fake is the C test double, loaded by the same path the backend under
// test loads, so that both share one copy and its state.
type Fake struct {
	t    *testing.T
	rt   Runtime
	path string
	lib  *ffi.Library
}

// NewFake resets the double rt.Fake and gives it n devices.
func NewFake(t *testing.T, rt Runtime, n int) *Fake { return newFake(t, rt, rt.Fake, n) }

func newFake(t *testing.T, rt Runtime, name string, n int) *Fake {
	t.Helper()
	path := ctest.Path(t, name)
	lib, err := ffi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{t: t, rt: rt, path: path, lib: lib}
	f.Call("fake_cuda_reset")
	f.Call("fake_cuda_set_devices", uintptr(n))
	return f
}

// Call calls a function of the double: a control function (fake_cuda_*)
// or one of the runtime's, as C code would.
func (f *Fake) Call(name string, args ...uintptr) uintptr {
	f.t.Helper()
	fn, err := f.lib.Symbol(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return ffi.Call(fn, args...)
}

// code calls a function of the runtime and returns its error code.
func (f *Fake) code(op gpurt.Op, args ...uintptr) int32 {
	f.t.Helper()
	return int32(f.Call(f.rt.sym(op), args...))
}

// setDevice makes GPU n current on the (locked) thread, as C code using
// the API would: the runtime's SetDevice, or the driver API's primary
// context made current (retained for the call: the backend under test
// holds it too).
func (f *Fake) setDevice(n int) {
	f.t.Helper()
	if !f.rt.driver() {
		if rc := f.code(gpurt.SetDevice, uintptr(n)); rc != 0 {
			f.t.Fatalf("%s(%d): %d", f.rt.sym(gpurt.SetDevice), n, rc)
		}
		return
	}
	dev, slot := cmem(f.t, 8), cmem(f.t, 8)
	if rc := f.code(gpurt.DeviceGet, uintptr(dev), uintptr(n)); rc != 0 {
		f.t.Fatalf("GPU %d's CUdevice: %d", n, rc)
	}
	cudev := uintptr(*(*int32)(dev))
	if rc := f.code(gpurt.PrimaryCtxRetain, uintptr(slot), cudev); rc != 0 {
		f.t.Fatalf("retaining GPU %d's context: %d", n, rc)
	}
	defer f.code(gpurt.PrimaryCtxRelease, cudev)
	if rc := f.code(gpurt.SetDevice, *(*uintptr)(slot)); rc != 0 {
		f.t.Fatalf("making GPU %d's context current: %d", n, rc)
	}
}

// memcpy queues a copy as C code using the API would, and returns its code.
func (f *Fake) memcpy(dst, src, n, kind, stream uintptr) int32 {
	f.t.Helper()
	if f.rt.driver() {
		return int32(f.Call(f.rt.copySym(gpurt.DeviceMemory, kind), dst, src, n, stream))
	}
	return f.code(gpurt.MemcpyAsync, dst, src, n, kind, stream)
}

// withString calls name with s as a C string first argument.
func (f *Fake) withString(name, s string, args ...uintptr) uintptr {
	f.t.Helper()
	cs, err := ffi.CString(s)
	if err != nil {
		f.t.Fatal(err)
	}
	defer ffi.Free(cs)
	return f.Call(name, append([]uintptr{uintptr(cs)}, args...)...)
}

// fail makes call fail once with code after n successful calls.
func (f *Fake) fail(call string, code, n int) {
	f.withString("fake_cuda_fail", call, uintptr(code), uintptr(n))
}

func (f *Fake) calls(call string) int64 { return int64(f.withString("fake_cuda_call_count", call)) }

// bound is the first of names that the double exports: the one a
// binding of them takes.
func (f *Fake) bound(names ...string) string {
	for _, n := range names {
		if _, err := f.lib.Symbol(n); err == nil {
			return n
		}
	}
	f.t.Fatalf("the double has none of %v", names)
	return ""
}

// Calls is how many times the double's function call was called since the
// reset.
func (f *Fake) Calls(call string) int64 { return f.calls(call) }
func (f *Fake) pending() int64          { return int64(f.Call("fake_cuda_pending_ops")) }
func (f *Fake) lastKind() uintptr       { return uintptr(int32(f.Call("fake_cuda_last_memcpy_kind"))) }

func (f *Fake) live() (allocs, events, streams int64) {
	return int64(f.Call("fake_cuda_live_allocations")), int64(f.Call("fake_cuda_live_events")),
		int64(f.Call("fake_cuda_live_streams"))
}

func (f *Fake) wantLive(allocs, events, streams int64) {
	f.t.Helper()
	if a, e, s := f.live(); a != allocs || e != events || s != streams {
		f.t.Errorf("live allocations, events, streams = %d, %d, %d; want %d, %d, %d", a, e, s, allocs, events, streams)
	}
}

// contexts is how many primary-context retains of the driver API are not
// released.
func (f *Fake) contexts() int64 { return int64(f.Call("fake_cuda_live_contexts")) }

// Probe probes a fresh backend on the double; at the end of the test it
// destroys the default streams and checks that nothing leaked, neither in
// the double nor on the C heap.
func (f *Fake) Probe() []Device {
	f.t.Helper()
	return f.probe(f.rt, true)
}

// ProbeAs probes a second backend, of rt's table, on the same double: one
// that has both APIs over one state (testdata/c/fakecuda_mixed.c), as a
// real libcudart and libcuda share a GPU. Called after Probe, its backend
// is closed before Probe's checks run.
func (f *Fake) ProbeAs(rt Runtime) []Device {
	f.t.Helper()
	return f.probe(rt, false)
}

// probe probes a backend of rt's table on the double and closes it when
// the test ends, checking then that nothing leaked when check.
func (f *Fake) probe(rt Runtime, check bool) []Device {
	f.t.Helper()
	heap := ffi.LiveAllocations()
	b := rt.backend(f.path)
	info, err := b.Probe(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		if err := b.Close(); err != nil {
			f.t.Error(err)
		}
		if !check {
			return
		}
		f.wantLive(0, 0, 0)
		if n := f.contexts(); n != 0 {
			f.t.Errorf("%d primary contexts still retained", n)
		}
		if p := f.pending(); p != 0 {
			f.t.Errorf("%d copies still queued", p)
		}
		if n := ffi.LiveAllocations(); n != heap {
			f.t.Errorf("C heap blocks: %d, want %d", n, heap)
		}
	})
	var ds []Device
	for _, d := range info.Devices {
		ds = append(ds, d.(Device))
	}
	return ds
}

func (rt Runtime) wantRuntimeError(t *testing.T, err error, call string, code int, msg string) {
	t.Helper()
	if !errors.Is(err, device.ErrRuntime) {
		t.Fatalf("error %v is not ErrRuntime", err)
	}
	var re *device.RuntimeError
	if !errors.As(err, &re) {
		t.Fatalf("error %v holds no RuntimeError", err)
	}
	if re.Runtime != rt.Table.Name || re.Call != call || re.Code != code || re.Message != msg {
		t.Fatalf("RuntimeError %+v; want %s %s %d %q", *re, rt.Table.Name, call, code, msg)
	}
}

// HostBytes is the host view of host-accessible memory. Not inlined:
// go1.26.8's compiler crashes (disjointTypes: "one of arguments is not a
// pointer") on a copy of constant size into it.
//
//go:noinline
func HostBytes(p device.Pointer, n int) []byte {
	return unsafe.Slice((*byte)(abi.Pointer(uintptr(p))), n)
}

// Pattern is n bytes that differ with seed.
func Pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}
