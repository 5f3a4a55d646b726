package opencl_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/ffi"
)

// probe returns the global backend's devices, skipping (outside CI) when
// OpenCL or a device is absent.
func probe(t testing.TB) device.Info {
	t.Helper()
	info, err := opencl.Backend.Probe(context.Background())
	if errors.Is(err, device.ErrNotFound) || errors.Is(err, device.ErrNoDevice) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("OpenCL must be available in CI: %v", err)
		}
		t.Skipf("no OpenCL (install pocl-opencl-icd ocl-icd-libopencl1): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return info
}

var clmem struct {
	once sync.Once
	d    *opencl.Device
	err  error
}

// modes returns the first device as probed and, when that one uses SVM, the
// same device probed again with cl_mem buffers forced, so both buffer
// conventions are exercised.
func modes(t testing.TB) map[string]*opencl.Device {
	t.Helper()
	d := probe(t).Devices[0].(*opencl.Device)
	if !d.UsesSVM() {
		return map[string]*opencl.Device{"clmem": d}
	}
	clmem.once.Do(func() {
		info, err := opencl.NewBackendForTest(nil, true).Probe(context.Background())
		clmem.err = err
		if err == nil {
			clmem.d = info.Devices[0].(*opencl.Device)
		}
	})
	if clmem.err != nil {
		t.Fatal(clmem.err)
	}
	if clmem.d.UsesSVM() {
		t.Fatal("noSVM backend uses SVM")
	}
	return map[string]*opencl.Device{"svm": d, "clmem": clmem.d}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7+i/251)
	}
	return b
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestProbe(t *testing.T) {
	info := probe(t)
	if len(info.Devices) == 0 {
		t.Fatal("no devices")
	}
	if info.Library == "" || !strings.Contains(info.Version, "OpenCL") {
		t.Errorf("library %q version %q", info.Library, info.Version)
	}
	for i, dev := range info.Devices {
		d := dev.(*opencl.Device)
		t.Logf("%s: %q vendor %q version %q SVM %v caps %#x host-accessible %v",
			info.Library, d.Name(), d.Vendor(), d.Version(), d.UsesSVM(), d.SVMCapabilities(), d.HostAccessible())
		if d.Type() != abi.DeviceOpenCL || d.ID() != int64(i) {
			t.Errorf("device %d: type %v id %d", i, d.Type(), d.ID())
		}
		if got, err := device.Lookup(abi.DeviceOpenCL, int64(i)); err != nil || got != dev {
			t.Errorf("Lookup(opencl, %d) = %v, %v", i, got, err)
		}
		if d.Context() == 0 || d.CommandQueue() == 0 || d.CLDevice() == 0 || d.Platform() == 0 {
			t.Errorf("device %d: null handle", i)
		}
		free, total, err := d.MemoryInfo()
		if err != nil || total <= 0 || free != total {
			t.Errorf("MemoryInfo = %d, %d, %v", free, total, err)
		}
	}
	again, err := opencl.Backend.Probe(context.Background())
	if err != nil || len(again.Devices) != len(info.Devices) || again.Devices[0] != info.Devices[0] {
		t.Errorf("second probe differs: %v, %v", again, err)
	}
	if opencl.Backend.Name() != "opencl" {
		t.Errorf("name %q", opencl.Backend.Name())
	}
}

func TestProbeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := opencl.NewBackendForTest([]string{"/nonexistent"}, false)
	if _, err := b.Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled probe: %v", err)
	}
	// Not cached: a later probe runs.
	if _, err := b.Probe(context.Background()); !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("probe after cancel: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	_, err := opencl.NewBackendForTest([]string{"/nonexistent/libOpenCL.so.1", "libNoSuchOpenCL.so"}, false).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), "/nonexistent/libOpenCL.so.1") ||
		!strings.Contains(err.Error(), "libNoSuchOpenCL.so") {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("CDEVICE_OPENCL_LIBRARY", "/nonexistent")
	_, err = opencl.NewBackendForTest(nil, false).Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("CDEVICE_OPENCL_LIBRARY=/nonexistent: err = %v", err)
	}
	t.Log(err)
}

func TestMissingSymbol(t *testing.T) {
	_, err := opencl.NewBackendForTest([]string{ffi.CLibrary}, false).Probe(context.Background())
	if !errors.Is(err, device.ErrMissingSymbol) || !strings.Contains(err.Error(), "clGetPlatformIDs") {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}

func TestRoundTrip(t *testing.T) {
	for mode, d := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, err := d.NewStream()
			must(t, err)
			defer s.Close()
			for _, n := range []int{1, 7, 64, 4093, 1<<20 + 3} {
				for _, off := range []int{0, 1, 13, 4096} {
					src := pattern(n, byte(off))
					size := off + n + 5
					p, err := d.Alloc(size)
					must(t, err)
					must(t, d.CopyToDevice(p, off, src, s))
					back := make([]byte, n)
					must(t, d.CopyToHost(back, p, off, s))
					must(t, s.Synchronize())
					if !bytes.Equal(back, src) {
						t.Fatalf("n %d off %d: round trip differs", n, off)
					}
					// Part of it, from an inner offset, on the default queue.
					if n > 3 {
						part := make([]byte, n-3)
						must(t, d.CopyToHost(part, p, off+2, nil))
						e, err := d.NewEvent()
						must(t, err)
						must(t, e.Record(nil))
						must(t, e.Synchronize())
						must(t, e.Close())
						if !bytes.Equal(part, src[2:n-1]) {
							t.Fatalf("n %d off %d: partial read differs", n, off)
						}
					}
					// Device to device, into another buffer at another offset.
					q, err := d.Alloc(n + 9)
					must(t, err)
					must(t, d.CopyOnDevice(q, 9, p, off, n, s))
					back2 := make([]byte, n)
					must(t, d.CopyToHost(back2, q, 9, s))
					must(t, s.Synchronize())
					if !bytes.Equal(back2, src) {
						t.Fatalf("n %d off %d: device-to-device copy differs", n, off)
					}
					if d.HostAccessible() {
						host := unsafe.Slice((*byte)(abi.Pointer(uintptr(q)+9)), n)
						if !bytes.Equal(host, src) {
							t.Fatalf("n %d off %d: host view of SVM differs", n, off)
						}
					}
					must(t, d.Free(p))
					must(t, d.Free(q))
				}
			}
			// Empty copies do nothing.
			p, err := d.Alloc(8)
			must(t, err)
			must(t, d.CopyToDevice(p, 8, nil, s))
			must(t, d.CopyToHost(nil, p, 0, s))
			must(t, d.CopyOnDevice(p, 0, p, 8, 0, s))
			must(t, d.Free(p))
		})
	}
}

func TestEventsAndStreams(t *testing.T) {
	for mode, d := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			live := ffi.LiveAllocations()
			s, err := d.NewStream()
			must(t, err)
			if s.Handle() == 0 || s.Handle() == d.CommandQueue() {
				t.Errorf("stream handle %#x (default queue %#x)", s.Handle(), d.CommandQueue())
			}
			e, err := d.NewEvent()
			must(t, err)
			if e.SyncEvent() == 0 {
				t.Fatal("SyncEvent is NULL")
			}
			must(t, e.Synchronize()) // never recorded: nothing to wait for
			must(t, d.WaitSyncEvent(context.Background(), e.SyncEvent(), nil))

			const n = 8 << 20
			src := pattern(n, 3)
			p, err := d.Alloc(n)
			must(t, err)
			must(t, d.CopyToDevice(p, 0, src, s))
			must(t, e.Record(s))
			clEvent := *(*uintptr)(abi.Pointer(e.SyncEvent()))
			if clEvent == 0 {
				t.Fatal("no cl_event after Record")
			}
			// The default queue waits for the stream's copy through the event.
			must(t, d.WaitSyncEvent(context.Background(), e.SyncEvent(), nil))
			must(t, d.WaitSyncEvent(context.Background(), e.SyncEvent(), s))
			back := make([]byte, n)
			must(t, d.WaitSyncEvent(context.Background(), e.SyncEvent(), nil))
			s2, err := d.NewStream()
			must(t, err)
			must(t, d.WaitSyncEvent(context.Background(), e.SyncEvent(), s2))
			must(t, d.CopyToHost(back, p, 0, s2))
			must(t, s2.Synchronize())
			if !bytes.Equal(back, src) {
				t.Fatal("data read after waiting on the event differs")
			}
			// Re-recording replaces the cl_event.
			must(t, e.Record(s2))
			must(t, e.Synchronize())
			must(t, d.WaitSyncEvent(context.Background(), 0, s)) // no event: nothing to do
			must(t, e.Close())
			must(t, e.Close())
			if e.SyncEvent() != 0 {
				t.Error("SyncEvent after Close")
			}
			if err := e.Record(s); err == nil {
				t.Error("Record after Close succeeded")
			}
			must(t, s2.Close())
			must(t, s.Synchronize())
			must(t, s.Close())
			must(t, s.Close())
			if err := s.Synchronize(); err == nil {
				t.Error("Synchronize of a closed stream succeeded")
			}
			if err := d.CopyToDevice(p, 0, src, s); err == nil {
				t.Error("copy on a closed stream succeeded")
			}
			must(t, d.Free(p))
			if got := ffi.LiveAllocations(); got != live {
				t.Errorf("C heap blocks: %d before, %d after", live, got)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	devs := modes(t)
	for mode, d := range devs {
		t.Run(mode, func(t *testing.T) {
			if err := d.Free(0xdeadbeef); err == nil {
				t.Error("Free of a bogus pointer succeeded")
			}
			if _, err := d.Alloc(0); err == nil {
				t.Error("Alloc(0) succeeded")
			}
			p, err := d.Alloc(16)
			must(t, err)
			if err := d.CopyToDevice(p, 8, make([]byte, 9), nil); err == nil {
				t.Error("copy past the end succeeded")
			}
			if err := d.CopyToHost(make([]byte, 4), p, -1, nil); err == nil {
				t.Error("negative offset succeeded")
			}
			if err := d.CopyOnDevice(p, 0, p, 12, 8, nil); err == nil {
				t.Error("device copy past the end succeeded")
			}
			if err := d.CopyToHost(make([]byte, 4), 0, 0, nil); err == nil {
				t.Error("copy from NULL succeeded")
			}
			must(t, d.Free(p))
			if err := d.Free(p); err == nil {
				t.Error("double Free succeeded")
			}
			// A stream without a handle (the CPU's) means the default queue; a
			// foreign handle is refused rather than passed to OpenCL.
			cs, err := device.CPU.NewStream()
			must(t, err)
			p, err = d.Alloc(4)
			must(t, err)
			must(t, d.CopyToDevice(p, 0, []byte{1, 2, 3, 4}, cs))
			if err := d.CopyToDevice(p, 0, []byte{1, 2, 3, 4}, fakeStream{}); err == nil {
				t.Error("a foreign stream was accepted")
			}
			must(t, syncDefault(d))
			must(t, d.Free(p))
		})
	}
	if len(devs) == 2 {
		s, err := devs["clmem"].NewStream()
		must(t, err)
		defer s.Close()
		p, err := devs["svm"].Alloc(4)
		must(t, err)
		defer devs["svm"].Free(p)
		if err := devs["svm"].CopyToDevice(p, 0, make([]byte, 4), s); err == nil {
			t.Error("a stream of another device was accepted")
		}
	}
}

type fakeStream struct{}

func (fakeStream) Handle() uintptr    { return 0x1234 }
func (fakeStream) Synchronize() error { return nil }
func (fakeStream) Close() error       { return nil }

// syncDefault waits for the device's default queue through an event.
func syncDefault(d device.Device) error {
	e, err := d.NewEvent()
	if err != nil {
		return err
	}
	defer e.Close()
	if err := e.Record(nil); err != nil {
		return err
	}
	return e.Synchronize()
}

// TestNoDevice runs the probe in a child process whose ICD loader finds no
// vendor (ocl-icd reads OCL_ICD_VENDORS once per process): ErrNoDevice.
func TestNoDevice(t *testing.T) {
	if os.Getenv("CDEVICE_OPENCL_NODEVICE_CHILD") == "1" {
		_, err := opencl.NewBackendForTest(nil, false).Probe(context.Background())
		if !errors.Is(err, device.ErrNoDevice) {
			t.Fatalf("probe with no ICD: %v", err)
		}
		t.Log(err)
		return
	}
	probe(t)
	if runtime.GOOS != "linux" {
		t.Skip("OCL_ICD_VENDORS is ocl-icd's (Linux)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDevice$", "-test.v")
	cmd.Env = append(os.Environ(), "CDEVICE_OPENCL_NODEVICE_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "no platform") {
		t.Fatalf("child did not report the missing platform:\n%s", out)
	}
}
