package hip_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// TestGPURT runs internal/gpurt's tests (the C test double with fault
// injection, libraries that are absent or not HIP) on the HIP table.
func TestGPURT(t *testing.T) { gpurttest.Run(t, hip.Runtime) }

// TestReal runs on a real AMD GPU only.
func TestReal(t *testing.T) { gpurttest.RunReal(t, hip.Runtime) }

// requireLibrary: CI installs Debian's libamdhip64-5 (amd64 only), so there
// a missing library is a failure, elsewhere a skip.
func requireLibrary(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, device.ErrNotFound) {
		return
	}
	if os.Getenv("CI") == "true" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		t.Fatalf("HIP runtime missing under CI: %v", err)
	}
	t.Skipf("%v (install libamdhip64-5 to run this test)", err)
}

// On a machine without an AMD GPU (CI) the real runtime loads and reports
// hipErrorNoDevice; with a GPU, TestReal uses the devices.
func TestProbeRealLibrary(t *testing.T) {
	info, err := hip.Backend.Probe(context.Background())
	requireLibrary(t, err)
	t.Logf("library %q, version %q, err %v", info.Library, info.Version, err)
	if info.Library == "" || info.Version == "" {
		t.Errorf("library %q, version %q: want both reported", info.Library, info.Version)
	}
	if err != nil {
		if !errors.Is(err, device.ErrNoDevice) {
			t.Fatalf("Probe: %v; want ErrNoDevice or devices", err)
		}
		if !strings.Contains(err.Error(), "no device (hipErrorNoDevice, 100)") {
			t.Errorf("error %q does not say no device (hipErrorNoDevice, 100)", err)
		}
		if len(info.Devices) != 0 {
			t.Errorf("devices %v with ErrNoDevice", info.Devices)
		}
	}
}

func TestVersionFormat(t *testing.T) {
	for v, want := range map[int32]string{50221153: "5.2.21153", 60140092: "6.1.40092", 1234: "1234"} {
		if got := hip.HIPVersion(v); got != want {
			t.Errorf("hipVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

// The HIP double is HIP on the points where it once answered as CUDA: its
// attributes are hipDeviceAttribute_t's numbers (CUDA's 75, 76 and 89 are
// refused), and the legacy default-stream handle 1 (hipStreamLegacy)
// exists only from HIP 6.2, while hipStreamPerThread (2) always does.
func TestDoubleIsHIP(t *testing.T) {
	f := gpurttest.NewFake(t, hip.Runtime, 1)
	out := make([]int32, 1)
	attr := func(a int) (int32, uintptr) {
		out[0] = -1
		rc := f.Call("hipDeviceGetAttribute", uintptr(unsafe.Pointer(&out[0])), uintptr(a), 0)
		return out[0], uintptr(int32(rc))
	}
	for a, want := range map[int]int32{23: 9, 61: 0, 9: 1} { // compute capability 9.0, concurrent managed access
		if v, rc := attr(a); rc != 0 || v != want {
			t.Errorf("hipDeviceGetAttribute(%d) = %d, %d; want %d", a, v, rc, want)
		}
	}
	for _, a := range []int{75, 76, 89} {
		if _, rc := attr(a); rc != 1 {
			t.Errorf("hipDeviceGetAttribute(%d), CUDA's number: code %d; want hipErrorInvalidValue", a, rc)
		}
	}
	for _, tc := range []struct {
		fake   string
		stream uintptr
		ok     bool
	}{{"fakehip", 1, false}, {"fakehip", 2, true}, {"fakehip_new", 1, true}, {"fakehip_new", 2, true}} {
		rt := hip.Runtime
		rt.Fake = tc.fake
		f := gpurttest.NewFake(t, rt, 1)
		f.Call("fake_cuda_set_driver_version", 0x7fffffff)
		if rc := int32(f.Call("hipStreamSynchronize", tc.stream)); (rc == 0) != tc.ok {
			t.Errorf("%s: hipStreamSynchronize(%d) = %d", tc.fake, tc.stream, rc)
		}
	}
}

// chipStar (a HIP on OpenCL, ../shared/runtimes/chipstar) as the double
// plays it (testdata/c/fakehip_chipstar.c): every test of the double
// passes on its shape, and a probe asks chipStar which OpenCL device a HIP
// device is and OpenCL whether that is a CPU, on a stream of its own.
func TestChipStarDouble(t *testing.T) {
	rt := hip.Runtime
	rt.Fake, rt.Version = "fakehip_chipstar", "runtime 1.1.0, driver 4"
	rt.OldDriver, rt.NewFake = 0, "" // no driver is too old for it
	rt.NoHostFake = ""               // its own pair is tested below
	t.Run("gpurt", func(t *testing.T) { gpurttest.Run(t, rt) })
	for _, tc := range []struct {
		name   string
		clType uintptr // CL_DEVICE_TYPE_CPU 2, _GPU 4
		level0 uintptr
		cpu    bool
	}{
		{"CPU", 2, 0, true},
		{"GPU", 4, 0, false},
		{"LevelZero", 2, 1, false}, // its handles are not OpenCL's
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := gpurttest.NewFake(t, rt, 2)
			f.Call("fake_chipstar_set_device", tc.clType, tc.level0)
			defer f.Call("fake_chipstar_set_device", 2, 0)
			devs := f.Probe()
			for _, d := range devs {
				if got := d.(interface{ IsCPU() bool }).IsCPU(); got != tc.cpu {
					t.Errorf("%v: IsCPU() = %v, want %v", d, got, tc.cpu)
				}
				// Device memory on the host's CPU is host memory: imports
				// read it in place (the double's is, as PoCL's is).
				if d.Type() == abi.DeviceROCm && d.HostAccessible() != tc.cpu {
					t.Errorf("%v: HostAccessible() = %v, want %v", d, d.HostAccessible(), tc.cpu)
				}
			}
			if n := f.Calls("hipGetBackendNativeHandles"); n != 4 {
				t.Errorf("hipGetBackendNativeHandles called %d times; want twice per GPU", n)
			}
		})
	}
	// No hipExtHostAlloc: pinned host memory is hipHostMalloc's, given
	// back with hipFreeHost (what it has of each pair).
	t.Run("HostMemory", func(t *testing.T) {
		f := gpurttest.NewFake(t, rt, 1)
		devs := f.Probe()
		if err := gpurttest.RoundTrip(devs[1], 64, 7); err != nil {
			t.Fatal(err)
		}
		if a, fr := f.Calls("hipHostMalloc"), f.Calls("hipFreeHost"); a != 1 || fr != 1 {
			t.Errorf("hipHostMalloc called %d times, hipFreeHost %d; want once each", a, fr)
		}
	})
	t.Run("AMD", func(t *testing.T) { // no hipGetBackendNativeHandles: a GPU
		for _, d := range gpurttest.NewFake(t, hip.Runtime, 1).Probe() {
			if d.(interface{ IsCPU() bool }).IsCPU() {
				t.Errorf("%v: IsCPU() on AMD's runtime", d)
			}
		}
	})
}
