package gpurttest

import (
	"runtime"
	"testing"

	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/gpurt"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// The C baseline of the copy benchmarks (testdata/c/copy_baseline.c): the
// same copies as the Go side of BenchmarkCopies, by plain C code through
// the same library.

// A baseline is copy_baseline.c loaded, set up on the locked calling
// thread for one library.
type baseline struct {
	t   testing.TB
	lib *ffi.Library
}

// The APIs of copy_baseline_open (its api argument).
const (
	apiCUDARuntime = 0
	apiCUDADriver  = 1
	apiHIP         = 2
)

// baselineAPI is the API copy_baseline.c calls rt's library through: the
// driver API, or the runtime API with CUDA's names or HIP's.
func (rt Runtime) baselineAPI() uintptr {
	switch {
	case rt.driver():
		return apiCUDADriver
	case rt.Table.Prefix == "hip":
		return apiHIP
	}
	return apiCUDARuntime
}

// openBaseline loads copy_baseline.c and sets it up for lib through rt's
// API with n bytes each side, the host's pinned by the library when
// pinned, else malloc's, and a stream and an event. It locks the goroutine
// to its thread (the runtime's current device is per thread) until close.
func openBaseline(t testing.TB, rt Runtime, lib string, pinned bool, n int) *baseline {
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
	runtime.LockOSThread()
	if rc := int32(bl.call("copy_baseline_open", uintptr(cs), rt.baselineAPI(), flag(pinned), uintptr(n))); rc != 0 {
		runtime.UnlockOSThread()
		t.Fatalf("copy_baseline_open(%s, api %d, pinned %v, %d): %d", lib, rt.baselineAPI(), pinned, n, rc)
	}
	return bl
}

// flag is a C int of v.
func flag(v bool) uintptr {
	if v {
		return 1
	}
	return 0
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
	if rc := int32(bl.call("copy_baseline_run", flag(toDevice), uintptr(iters))); rc != 0 {
		bl.t.Fatalf("copy_baseline_run: %d", rc)
	}
}

// reads does iters times what a consumer does per batch of a device
// stream: waits for the batch's event, then reads n values of width bytes
// from the device on one stream with one synchronization.
func (bl *baseline) reads(n, width, iters int) {
	if rc := int32(bl.call("copy_baseline_reads", uintptr(n), uintptr(width), uintptr(iters))); rc != 0 {
		bl.t.Fatalf("copy_baseline_reads(%d, %d, %d): %d", n, width, iters, rc)
	}
}

// close frees what open took; an error of the library's frees fails the
// test.
func (bl *baseline) close() {
	defer runtime.UnlockOSThread()
	if rc := int32(bl.call("copy_baseline_close")); rc != 0 {
		bl.t.Errorf("copy_baseline_close: %d", rc)
	}
}

// benchmarkCopyC is benchmarkCopyGo's copies done by C code through the
// library rt.Real loaded: the figure the Go copies are held against.
func benchmarkCopyC(b *testing.B, rt Runtime, c copyCase) {
	RealDevices(b, rt)
	info, _ := rt.Real.Probe(b.Context())
	bl := openBaseline(b, rt, info.Library, c.pinned, c.size)
	defer bl.close()
	b.SetBytes(int64(c.size))
	b.ResetTimer()
	bl.run(c.toDevice, b.N)
	b.StopTimer() // freeing (pinned memory above all) is not the copies'
}

// The baseline runs on the double too, through each API (CUDA's runtime
// and driver API, HIP), with pageable and with pinned host memory: its
// copies and reads arrive, it allocates the host memory it says it does
// with the functions the binding would take (a HIP without
// hipExtHostAlloc, as chipStar, has hipHostMalloc; its reads land in pinned
// memory of their own where it was opened pinned), its stream waits for its
// event once per batch of reads, and it gives back everything it took, each
// with its own call (this checks the benchmark's C side, which otherwise
// runs only on a GPU).
func testCopyBaseline(t *testing.T, rt Runtime) {
	host := rt.Table.Kinds[rt.kind(gpurt.HostMemory)]
	for _, pinned := range []bool{false, true} {
		t.Run(memoryName(pinned), func(t *testing.T) {
			f := NewFake(t, rt, 1)
			mk := rt.Table.Memcpy
			toDevice, toHost := rt.copySym(0, mk.HostToDevice), rt.copySym(0, mk.DeviceToHost)
			copies := func() int64 {
				n := f.calls(toDevice) + f.calls(toHost)
				if toHost == toDevice { // the runtime: one function copies both ways
					n /= 2
				}
				return n
			}
			hostAlloc := f.bound(append([]string{host.Alloc}, host.OlderAlloc...)...)
			hostFree := f.bound(append([]string{host.Free}, host.OlderFree...)...)
			eventWait := rt.sym(gpurt.StreamWaitEvent)
			before, hostAllocs, hostFrees := copies(), f.calls(hostAlloc), f.calls(hostFree)
			bl := openBaseline(t, rt, f.path, pinned, 1<<16)
			live := int64(1) // the device memory
			if pinned {
				live = 2 // and the pinned host memory
			}
			if a, e, s := f.live(); a != live || e != 1 || s != 1 {
				t.Errorf("%d allocations, %d events, %d streams of the library while open, want %d, 1, 1", a, e, s, live)
			}
			bl.run(true, 3)
			bl.run(false, 3)
			waits := f.calls(eventWait)
			bl.reads(4, 8, 2)
			bl.reads(3, 4, 1)
			if n := f.calls(eventWait) - waits; n != 3 {
				t.Errorf("%d calls of %s for 3 batches of reads, want 3", n, eventWait)
			}
			bl.close()
			if n := copies() - before; n != 19 {
				t.Errorf("%d copies, want 19 (2 checked, 6 timed, 11 reads)", n)
			}
			want := int64(0)
			if pinned {
				want = 3 // the copies' memory, and the reads' of each of the 2 calls
			}
			if a, fr := f.calls(hostAlloc)-hostAllocs, f.calls(hostFree)-hostFrees; a != want || fr != want {
				t.Errorf("%d calls of %s and %d of %s, want %d each", a, hostAlloc, fr, hostFree, want)
			}
			f.wantLive(0, 0, 0)
			if n := f.contexts(); n != 0 {
				t.Errorf("%d primary contexts retained", n)
			}
		})
	}
}
