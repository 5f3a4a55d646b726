package gpurttest

import (
	"runtime"
	"testing"

	"github.com/purearrow/cdevice/internal/ctest"
	"github.com/purearrow/cdevice/internal/ffi"
)

// The C baseline of the copy benchmarks (testdata/c/copy_baseline.c): the
// same copies as BenchmarkCopy, by plain C code through the same library.

// A baseline is copy_baseline.c loaded, set up on the locked calling
// thread for one library.
type baseline struct {
	t   testing.TB
	lib *ffi.Library
}

// openBaseline loads copy_baseline.c and sets it up for lib (through the
// driver API when rt's table is the driver API's) with n bytes each side.
// It locks the goroutine to its thread (the runtime's current device is
// per thread) until close.
func openBaseline(t testing.TB, rt Runtime, lib string, n int) *baseline {
	t.Helper()
	l, err := ffi.Open(ctest.Path(t, "copy_baseline"))
	if err != nil {
		t.Fatal(err)
	}
	bl := &baseline{t: t, lib: l}
	cs, err := ffi.CString(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer ffi.Free(cs)
	driver := uintptr(0)
	if rt.driver() {
		driver = 1
	}
	runtime.LockOSThread()
	if rc := int32(bl.call("copy_baseline_open", uintptr(cs), driver, uintptr(n))); rc != 0 {
		runtime.UnlockOSThread()
		t.Fatalf("copy_baseline_open(%s): %d", lib, rc)
	}
	return bl
}

func (bl *baseline) call(name string, args ...uintptr) uintptr {
	fn, err := bl.lib.Symbol(name)
	if err != nil {
		bl.t.Fatal(err)
	}
	return ffi.Call(fn, args...)
}

// run copies iters times, each waited for.
func (bl *baseline) run(toDevice bool, iters int) {
	dir := uintptr(0)
	if toDevice {
		dir = 1
	}
	if rc := int32(bl.call("copy_baseline_run", dir, uintptr(iters))); rc != 0 {
		bl.t.Fatalf("copy_baseline_run: %d", rc)
	}
}

func (bl *baseline) close() {
	bl.call("copy_baseline_close")
	runtime.UnlockOSThread()
}

// BenchmarkCopyC is BenchmarkCopy's copies done by C code through the
// library rt.Real loaded: the figure the Go copies are held against.
func BenchmarkCopyC(b *testing.B, rt Runtime, toDevice bool) {
	RealDevices(b, rt)
	info, _ := rt.Real.Probe(b.Context())
	n := copySize()
	bl := openBaseline(b, rt, info.Library, n)
	defer bl.close()
	b.SetBytes(int64(n))
	b.ResetTimer()
	bl.run(toDevice, b.N)
}

// The baseline runs on the double too: its copies arrive and it gives back
// everything it took (this checks the benchmark's C side, which otherwise
// runs only on a GPU).
func testCopyBaseline(t *testing.T, rt Runtime) {
	if rt.Table.Name != "cuda" {
		t.Skip("the baseline calls CUDA's functions")
	}
	f := NewFake(t, rt, 1)
	mk := rt.Table.Memcpy
	toDevice, toHost := rt.copySym(0, mk.HostToDevice), rt.copySym(0, mk.DeviceToHost)
	before := f.calls(toDevice) + f.calls(toHost)
	bl := openBaseline(t, rt, f.path, 1<<16)
	bl.run(true, 3)
	bl.run(false, 3)
	bl.close()
	n := f.calls(toDevice) + f.calls(toHost) - before
	if toHost == toDevice { // the runtime: one function copies both ways
		n /= 2
	}
	if n != 8 {
		t.Errorf("%d copies, want 8 (2 checked, 6 timed)", n)
	}
	f.wantLive(0, 0, 0)
	if n := f.contexts(); n != 0 {
		t.Errorf("%d primary contexts retained", n)
	}
}
