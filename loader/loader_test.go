package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

func TestParseDeviceSpec(t *testing.T) {
	for _, c := range []struct {
		in   string
		typ  abi.DeviceType
		id   int64
		fail bool
	}{
		{in: "cpu", typ: abi.DeviceCPU, id: -1},
		{in: " CPU ", typ: abi.DeviceCPU, id: -1},
		{in: "cuda:0", typ: abi.DeviceCUDA},
		{in: "cuda:3", typ: abi.DeviceCUDA, id: 3},
		{in: "cuda", typ: abi.DeviceCUDA},
		{in: "cuda_host:1", typ: abi.DeviceCUDAHost, id: 1},
		{in: "cuda_managed:2", typ: abi.DeviceCUDAManaged, id: 2},
		{in: "hip:0", typ: abi.DeviceROCm},
		{in: "HIP:1", typ: abi.DeviceROCm, id: 1},
		{in: "rocm:1", typ: abi.DeviceROCm, id: 1},
		{in: "hip_host:0", typ: abi.DeviceROCmHost},
		{in: "rocm_host:4", typ: abi.DeviceROCmHost, id: 4},
		{in: "opencl:0", typ: abi.DeviceOpenCL},
		{in: "opencl:12", typ: abi.DeviceOpenCL, id: 12},
		{in: "vulkan:0", typ: abi.DeviceVulkan}, // any abi type: a new backend needs no parser change
		{in: "", fail: true},
		{in: ":0", fail: true},
		{in: "gpu:0", fail: true},
		{in: "cuda:", fail: true},
		{in: "cuda:-1", fail: true},
		{in: "cuda:x", fail: true},
		{in: "cuda:1:2", fail: true},
		{in: "cuda:0x1", fail: true},
		{in: "cpu:0", fail: true},
		{in: "device(5):0", fail: true},
	} {
		typ, id, err := ParseDeviceSpec(c.in)
		switch {
		case c.fail && !errors.Is(err, ErrBadDeviceSpec):
			t.Errorf("ParseDeviceSpec(%q) = %v, %d, %v; want ErrBadDeviceSpec", c.in, typ, id, err)
		case !c.fail && (err != nil || typ != c.typ || id != c.id):
			t.Errorf("ParseDeviceSpec(%q) = %v, %d, %v; want %v, %d", c.in, typ, id, err, c.typ, c.id)
		}
	}
}

func byName(r *Report, name string) *BackendReport {
	for i := range r.Backends {
		if r.Backends[i].Name == name {
			return &r.Backends[i]
		}
	}
	return nil
}

// On this machine (and CI): PoCL gives OpenCL devices, Debian's HIP runtime
// loads and finds no GPU, CUDA is not installed. Elsewhere only what holds
// anywhere is checked; under CI the HIP and OpenCL expectations are hard.
func TestDiscoverThisMachine(t *testing.T) {
	ctx := context.Background()
	r, err := Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Backends {
		t.Logf("%-7s %-9v library=%q version=%q reason=%q", b.Name, b.Elapsed.Round(time.Microsecond), b.Library, b.Version, b.Reason)
		for _, d := range b.Devices {
			t.Logf("        %s %q total=%d free=%d", d.Spec(), d.Name, d.TotalMemory, d.FreeMemory)
		}
		if (b.Err == nil) != (len(b.Devices) > 0) || (b.Err == nil) != (b.Reason == "") {
			t.Errorf("%s: err %v, reason %q with %d devices", b.Name, b.Err, b.Reason, len(b.Devices))
		}
		if strings.ContainsAny(b.Reason, "\n") || strings.HasPrefix(b.Reason, b.Name+":") {
			t.Errorf("%s: reason %q is not one line without the backend's name", b.Name, b.Reason)
		}
		if errors.Is(b.Err, device.ErrNotFound) && !strings.HasPrefix(b.Reason, "not installed") && !strings.HasPrefix(b.Reason, "cannot load") {
			t.Errorf("%s: reason %q for %v", b.Name, b.Reason, b.Err)
		}
		if b.Elapsed < 0 {
			t.Errorf("%s: elapsed %v", b.Name, b.Elapsed)
		}
		for _, d := range b.Devices {
			if got, err := device.Lookup(d.Type, d.ID); err != nil || got != d.Device {
				t.Errorf("%s: Lookup(%s) = %v, %v", b.Name, d.Spec(), got, err)
			}
		}
	}
	t.Logf("default %s: %s", r.Default.Name(), r.DefaultReason)
	if r.Default == nil || r.DefaultReason == "" {
		t.Fatalf("default %v, %q", r.Default, r.DefaultReason)
	}
	for _, name := range []string{"hip", "opencl"} {
		if byName(r, name) == nil {
			t.Fatalf("backend %s is not registered", name)
		}
	}
	ci := os.Getenv("CI") == "true" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64"

	// CI's HIP is Debian's libamdhip64 without a device, except in the leg
	// that names chipStar (CDEVICE_HIP_LIBRARY), whose device is the CPU.
	hip := byName(r, "hip")
	switch {
	case errors.Is(hip.Err, device.ErrNoDevice):
		if !strings.Contains(hip.Reason, "no device (hipErrorNoDevice, 100)") || !strings.Contains(hip.Library, "amdhip64") {
			t.Errorf("hip: reason %q, library %q", hip.Reason, hip.Library)
		}
	case ci && os.Getenv("CDEVICE_HIP_LIBRARY") != "":
		if hip.Err != nil || len(hip.Devices) == 0 {
			t.Errorf("hip under CI with CDEVICE_HIP_LIBRARY: %v, %d devices (want the named runtime's devices)", hip.Err, len(hip.Devices))
		}
	case ci:
		t.Errorf("hip under CI: %v (want the installed runtime reporting no device)", hip.Err)
	}
	cl := byName(r, "opencl")
	if ci && len(cl.Devices) == 0 {
		t.Errorf("opencl under CI: %v (want PoCL's device)", cl.Err)
	}
	onlyHostCL := len(cl.Devices) > 0
	for _, d := range cl.Devices {
		isCPU := d.Device.(hostProcessor).IsCPU()
		onlyHostCL = onlyHostCL && isCPU
		if d.Device.HostAccessible() && !isCPU || ci && !isCPU {
			t.Errorf("%s (%s): IsCPU %v, HostAccessible %v; PoCL's device is CL_DEVICE_TYPE_CPU", d.Spec(), d.Name, isCPU, d.Device.HostAccessible())
		}
	}
	if len(cl.Devices) > 0 && hip.Err != nil && (byName(r, "cuda") == nil || byName(r, "cuda").Err != nil) {
		switch {
		case onlyHostCL: // PoCL: OpenCL on this CPU is no reason to leave the CPU device
			if r.Default != device.CPU || !strings.Contains(r.DefaultReason, "opencl: only the host's CPU (opencl:0") {
				t.Errorf("default %v (%q); want the CPU, saying opencl has only the host's CPU", r.Default.Type(), r.DefaultReason)
			}
		case r.Default.Type() != abi.DeviceOpenCL || !strings.Contains(r.DefaultReason, "hip: "+hip.Reason):
			t.Errorf("default %v (%q); want the OpenCL device, saying why not HIP", r.Default.Type(), r.DefaultReason)
		}
	}

	// Cached: the same report, however many ask at once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if again, err := Discover(ctx); err != nil || again != r {
				t.Errorf("Discover again = %p, %v; want the cached %p", again, err, r)
			}
		})
	}
	wg.Wait()
}

func TestDefaultEnv(t *testing.T) {
	ctx := context.Background()
	r, err := Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv(EnvDevice, "")
	if d, why, err := Default(ctx); err != nil || d != r.Default || why != r.DefaultReason {
		t.Errorf("Default() with %s empty = %v, %q, %v", EnvDevice, d, why, err)
	}

	t.Setenv(EnvDevice, "cpu")
	if d, why, err := Default(ctx); err != nil || d != device.CPU || why != EnvDevice+"=cpu" {
		t.Errorf("Default() with cpu = %v, %q, %v", d, why, err)
	}

	t.Setenv(EnvDevice, "gpu0")
	if _, _, err := Default(ctx); !errors.Is(err, ErrBadDeviceSpec) || !strings.Contains(err.Error(), EnvDevice) {
		t.Errorf("Default() with gpu0 = %v; want ErrBadDeviceSpec naming %s", err, EnvDevice)
	}

	// A device that is not there says why, through the backend's error.
	if hip := byName(r, "hip"); hip.Err != nil {
		for _, s := range []string{"hip:0", "rocm:0", "hip_host:0"} {
			t.Setenv(EnvDevice, s)
			_, _, err := Default(ctx)
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, hip.Err) || !strings.Contains(err.Error(), hip.Reason) {
				t.Errorf("Default() with %s = %v; want ErrUnavailable with %q", s, err, hip.Reason)
			}
			t.Logf("%s=%s: %v", EnvDevice, s, err)
		}
	}
	if cl := byName(r, "opencl"); len(cl.Devices) > 0 {
		t.Setenv(EnvDevice, "opencl:0")
		if d, _, err := Default(ctx); err != nil || d != cl.Devices[0].Device {
			t.Errorf("Default() with opencl:0 = %v, %v", d, err)
		}
		t.Setenv(EnvDevice, "opencl:99")
		_, _, err := Default(ctx)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "this machine has opencl:0") {
			t.Errorf("Default() with opencl:99 = %v", err)
		}
	}
	t.Setenv(EnvDevice, "vulkan:0")
	if _, _, err := Default(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Default() with vulkan:0 = %v; want ErrUnavailable", err)
	}
}

// fakeDevice is enough of a device for choosing a default.
type fakeDevice struct {
	device.Device
	typ abi.DeviceType
	id  int64
	cpu bool // an OpenCL CL_DEVICE_TYPE_CPU device
}

func (d fakeDevice) IsCPU() bool { return d.cpu }

func (d fakeDevice) Type() abi.DeviceType                       { return d.typ }
func (d fakeDevice) ID() int64                                  { return d.id }
func (d fakeDevice) Name() string                               { return fmt.Sprintf("fake %v %d", d.typ, d.id) }
func (d fakeDevice) MemoryInfo() (free, total int64, err error) { return 1, 2, nil }

type fakeBackend struct {
	name    string
	devs    []device.Device
	err     error
	pan     bool
	skipped []string
}

func (b fakeBackend) Name() string { return b.name }
func (b fakeBackend) Probe(context.Context) (device.Info, error) {
	if b.pan {
		panic("boom")
	}
	return device.Info{Library: "lib" + b.name, Devices: b.devs, Skipped: b.skipped}, b.err
}

// The report names the libraries a backend passed over, and why.
func TestReportSkipped(t *testing.T) {
	skipped := []string{"libcudart.so.13: driver too old: it supports CUDA 12.9, the runtime is CUDA 13.0"}
	r := discover([]device.Backend{fakeBackend{name: "cuda", devs: []device.Device{dev(abi.DeviceCUDA, 0)}, skipped: skipped}})
	if got := r.Backends[0].Skipped; !slices.Equal(got, skipped) {
		t.Errorf("Skipped %q, want %q", got, skipped)
	}
}

// Under a clock that moves in coarse steps (Windows', Wine's) a fast probe
// truly measures 0, and a clock stepped back (a fake one; the monotonic
// clock never is) must not make it negative: Elapsed is never below 0, and
// the rest of the report does not depend on it.
func TestProbeCoarseClock(t *testing.T) {
	defer func(old func() time.Time) { now = old }(now)
	base := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name  string
		clock func() time.Time
		want  time.Duration
	}{
		{"frozen", func() time.Time { return base }, 0},
		{"backwards", stepClock(base, -time.Millisecond), 0},
		{"16ms steps", stepClock(base, 16*time.Millisecond), 16 * time.Millisecond},
	} {
		now = c.clock
		r := discover([]device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "opencl", devs: []device.Device{dev(abi.DeviceOpenCL, 0)}},
		})
		for _, b := range r.Backends {
			if b.Elapsed != c.want {
				t.Errorf("%s: %s elapsed %v, want %v", c.name, b.Name, b.Elapsed, c.want)
			}
		}
		if r.Backends[0].Reason == "" || len(r.Backends[1].Devices) != 1 || r.Default == nil {
			t.Errorf("%s: report %+v", c.name, r)
		}
	}
}

// stepClock moves by step at every read.
func stepClock(t time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

var (
	errCUDAMissing = fmt.Errorf("%w: cuda: not installed: tried libcudart.so.13, libcudart.so.12", device.ErrNotFound)
	errHIPNoDevice = fmt.Errorf("hip: no device (hipErrorNoDevice, 100): %w", device.ErrNoDevice)
	errCLMissing   = fmt.Errorf("%w: opencl: no OpenCL library (tried libOpenCL.so.1)", device.ErrNotFound)
)

func dev(t abi.DeviceType, id int64) device.Device { return fakeDevice{typ: t, id: id} }

func TestPickDefault(t *testing.T) {
	for _, c := range []struct {
		name     string
		backends []device.Backend
		want     device.Device
		reason   string
	}{{
		name: "nothing installed",
		backends: []device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "hip", err: errHIPNoDevice},
			fakeBackend{name: "opencl", err: errCLMissing},
		},
		want: device.CPU,
		reason: "no GPU: cuda: not installed: tried libcudart.so.13, libcudart.so.12; " +
			"hip: no device (hipErrorNoDevice, 100); opencl: not installed: no OpenCL library (tried libOpenCL.so.1)",
	}, {
		name: "cuda before hip before opencl",
		backends: []device.Backend{
			fakeBackend{name: "opencl", devs: []device.Device{dev(abi.DeviceOpenCL, 0)}},
			fakeBackend{name: "hip", devs: []device.Device{dev(abi.DeviceROCmHost, 0), dev(abi.DeviceROCm, 0)}},
			fakeBackend{name: "cuda", devs: []device.Device{dev(abi.DeviceCUDAHost, 0), dev(abi.DeviceCUDA, 1), dev(abi.DeviceCUDA, 0)}},
		},
		want:   dev(abi.DeviceCUDA, 1),
		reason: "first GPU: cuda:1 (fake cuda 1)",
	}, {
		name: "hip",
		backends: []device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "hip", devs: []device.Device{dev(abi.DeviceROCmHost, 0), dev(abi.DeviceROCm, 0)}},
			fakeBackend{name: "opencl", devs: []device.Device{dev(abi.DeviceOpenCL, 0)}},
		},
		want:   dev(abi.DeviceROCm, 0),
		reason: "first GPU: rocm:0 (fake rocm 0)",
	}, {
		name: "an OpenCL accelerator",
		backends: []device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "hip", err: errHIPNoDevice},
			fakeBackend{name: "opencl", devs: []device.Device{dev(abi.DeviceOpenCL, 0)}},
		},
		want: dev(abi.DeviceOpenCL, 0),
		reason: "no CUDA or HIP GPU (cuda: not installed: tried libcudart.so.13, libcudart.so.12; " +
			"hip: no device (hipErrorNoDevice, 100)); first OpenCL device: opencl:0 (fake opencl 0)",
	}, {
		name: "OpenCL on the host's CPU (PoCL) is no default, an OpenCL GPU is",
		backends: []device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "hip", err: errHIPNoDevice},
			fakeBackend{name: "opencl", devs: []device.Device{fakeDevice{typ: abi.DeviceOpenCL, cpu: true}, dev(abi.DeviceOpenCL, 1)}},
		},
		want: dev(abi.DeviceOpenCL, 1),
		reason: "no CUDA or HIP GPU (cuda: not installed: tried libcudart.so.13, libcudart.so.12; " +
			"hip: no device (hipErrorNoDevice, 100)); first OpenCL device: opencl:1 (fake opencl 1)",
	}, {
		name: "PoCL alone: the CPU",
		backends: []device.Backend{
			fakeBackend{name: "cuda", err: errCUDAMissing},
			fakeBackend{name: "hip", err: errHIPNoDevice},
			fakeBackend{name: "opencl", devs: []device.Device{fakeDevice{typ: abi.DeviceOpenCL, cpu: true}, fakeDevice{typ: abi.DeviceOpenCL, id: 1, cpu: true}}},
		},
		want: device.CPU,
		reason: "no GPU: cuda: not installed: tried libcudart.so.13, libcudart.so.12; hip: no device (hipErrorNoDevice, 100); " +
			"opencl: only the host's CPU (opencl:0, opencl:1: slower than the CPU device; CDEVICE_DEVICE=opencl:0 picks it)",
	}, {
		name: "host memory is never the default; a panicking plugin is reported",
		backends: []device.Backend{
			fakeBackend{name: "cuda", devs: []device.Device{dev(abi.DeviceCUDAManaged, 0)}},
			fakeBackend{name: "weird", pan: true},
			fakeBackend{name: "empty"},
		},
		want: device.CPU,
		reason: "no GPU: cuda: only host-memory devices; weird: probe panicked: boom; " +
			"empty: no device: the probe found no devices",
	}, {
		name: "no backends",
		want: device.CPU, reason: "no GPU: no backend registered",
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := discover(c.backends)
			if r.Default != c.want || r.DefaultReason != c.reason {
				t.Errorf("default %v, %q\nwant    %v, %q", r.Default, r.DefaultReason, c.want, c.reason)
			}
			for _, b := range r.Backends {
				if b.Err != nil && b.Library != "lib"+b.Name && !strings.Contains(b.Reason, "panicked") {
					t.Errorf("%s: library %q not reported with the error", b.Name, b.Library)
				}
				for _, d := range b.Devices {
					if d.FreeMemory != 1 || d.TotalMemory != 2 {
						t.Errorf("%s: memory %d/%d", d.Spec(), d.FreeMemory, d.TotalMemory)
					}
				}
			}
		})
	}
}

func TestReason(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"cuda", fmt.Errorf("cuda: %w: dlopen libcudart.so.13: no such file", device.ErrNotFound), "not installed: dlopen libcudart.so.13: no such file"},
		{"opencl", fmt.Errorf("%w: opencl: no OpenCL library (tried x)", device.ErrNotFound), "not installed: no OpenCL library (tried x)"},
		{"hip", fmt.Errorf("hip: not installed: tried a, b: %w", device.ErrNotFound), "not installed: tried a, b"},
		{"hip", fmt.Errorf("hip: cannot load it: tried a (wrong ELF class): %w", device.ErrNotFound), "cannot load it: tried a (wrong ELF class)"},
		{"cuda", fmt.Errorf("%w: cuda: cudaGetDeviceCount failed: no CUDA-capable device is detected (100)", device.ErrNoDevice), "no device: cudaGetDeviceCount failed: no CUDA-capable device is detected (100)"},
		{"cuda", fmt.Errorf("cuda: driver too old: it supports CUDA 11.4, the runtime is CUDA 12.2: %w", &device.RuntimeError{Runtime: "cuda", Call: "cudaGetDeviceCount", Code: 35, Message: "CUDA driver version is insufficient for CUDA runtime version"}),
			"driver too old: it supports CUDA 11.4, the runtime is CUDA 12.2: cuda: cudaGetDeviceCount failed: CUDA driver version is insufficient for CUDA runtime version (35)"},
		{"cuda", fmt.Errorf("%w: libcudart.so.12 lacks cudaMallocManaged (runtime too old)", device.ErrMissingSymbol), "libcudart.so.12 lacks cudaMallocManaged (runtime too old)"},
		{"x", errors.New("x: first\nsecond"), "first"},
	} {
		if got := reason(c.name, c.err); got != c.want {
			t.Errorf("reason(%s, %q) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
}

func TestUnavailableNamesTheBackend(t *testing.T) {
	r := discover([]device.Backend{
		fakeBackend{name: "cuda", err: errCUDAMissing},
		fakeBackend{name: "hip", err: errHIPNoDevice},
		fakeBackend{name: "opencl", devs: []device.Device{dev(abi.DeviceOpenCL, 0)}},
	})
	_, err := r.find(abi.DeviceCUDAManaged, 0)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, device.ErrNotFound) ||
		err.Error() != "loader: device not available: cuda_managed:0: cuda: not installed: tried libcudart.so.13, libcudart.so.12" {
		t.Errorf("find(cuda_managed:0) = %v", err)
	}
	if _, err := r.find(abi.DeviceROCmHost, 1); !errors.Is(err, device.ErrNoDevice) || errors.Is(err, device.ErrNotFound) {
		t.Errorf("find(rocm_host:1) = %v; want hip's reason only", err)
	}
	if _, err := r.find(abi.DeviceMetal, 0); !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), "hip: no device") {
		t.Errorf("find(metal:0) = %v; want every failed backend's reason", err)
	}
}

func TestDiscoverCancelledBeforeStart(t *testing.T) {
	cache.mu.Lock()
	saved := cache.d
	cache.d = nil
	cache.mu.Unlock()
	defer func() {
		cache.mu.Lock()
		cache.d = saved
		cache.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := Discover(ctx); !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("Discover(cancelled) = %v, %v", r, err)
	}
	if cache.d != nil {
		t.Fatal("a cancelled first call started discovery")
	}
}

// helperEnv marks the child process that TestHelperProcess runs in.
const helperEnv = "CDEVICE_LOADER_HELPER"

// nothingInstalled points every backend at a library that does not exist.
var nothingInstalled = []string{
	"CDEVICE_CUDA_LIBRARY=/nonexistent/libcudart.so",
	"CDEVICE_HIP_LIBRARY=/nonexistent/libamdhip64.so",
	"CDEVICE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so",
}

type helperBackend struct {
	Name, Library, Reason, Kind string
	Devices                     []string
	ElapsedNS                   int64
}

type helperOutput struct {
	ElapsedNS     int64 // the cold Discover, measured in the child
	Backends      []helperBackend
	Default       string
	DefaultReason string
}

// TestHelperProcess is not a test: it is the fresh process (probes are
// cached per process) that runHelper starts, and does nothing otherwise.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for the subprocess tests")
	}
	start := time.Now()
	r, err := Discover(context.Background())
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	out := helperOutput{ElapsedNS: elapsed.Nanoseconds(), Default: spec(r.Default.Type(), r.Default.ID()), DefaultReason: r.DefaultReason}
	for _, b := range r.Backends {
		hb := helperBackend{Name: b.Name, Library: b.Library, Reason: b.Reason, ElapsedNS: b.Elapsed.Nanoseconds()}
		for _, k := range []struct {
			err  error
			kind string
		}{{device.ErrNotFound, "not found"}, {device.ErrNoDevice, "no device"}, {device.ErrMissingSymbol, "missing symbol"}, {device.ErrRuntime, "runtime"}} {
			if errors.Is(b.Err, k.err) {
				hb.Kind = k.kind
				break
			}
		}
		for _, d := range b.Devices {
			hb.Devices = append(hb.Devices, d.Spec())
		}
		out.Backends = append(out.Backends, hb)
	}
	j, _ := json.Marshal(out)
	fmt.Printf("\nHELPER %s\n", j)
}

// runHelper runs Discover in a fresh process with env added.
func runHelper(tb testing.TB, env ...string) helperOutput {
	tb.Helper()
	return runHelperIn(tb, "", env...)
}

// runHelperIn is runHelper with the child's working directory dir ("":
// this process's).
func runHelperIn(tb testing.TB, dir string, env ...string) helperOutput {
	tb.Helper()
	cmd := selfexec.Command(append([]string{helperEnv + "=1", EnvDevice + "="}, env...),
		"-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("helper: %v\n%s", err, b)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if j, ok := strings.CutPrefix(line, "HELPER "); ok {
			var out helperOutput
			if err := json.Unmarshal([]byte(j), &out); err != nil {
				tb.Fatalf("helper output %q: %v", j, err)
			}
			return out
		}
	}
	tb.Fatalf("helper printed no report:\n%s", b)
	return helperOutput{}
}

func TestNothingInstalled(t *testing.T) {
	out := runHelper(t, nothingInstalled...)
	t.Logf("cold discovery %v; default %s: %s", time.Duration(out.ElapsedNS), out.Default, out.DefaultReason)
	if out.Default != "cpu" || !strings.HasPrefix(out.DefaultReason, "no GPU: ") {
		t.Errorf("default %s (%q); want cpu, no GPU: …", out.Default, out.DefaultReason)
	}
	for _, b := range out.Backends {
		t.Logf("%-7s %v %s: %s", b.Name, time.Duration(b.ElapsedNS), b.Kind, b.Reason)
		if b.Kind != "not found" || !strings.HasPrefix(b.Reason, "not installed") || len(b.Devices) > 0 || b.Library != "" {
			t.Errorf("%s: %+v; want not installed", b.Name, b)
		}
		if !strings.Contains(out.DefaultReason, b.Name+": "+b.Reason) {
			t.Errorf("default reason %q lacks %s's %q", out.DefaultReason, b.Name, b.Reason)
		}
	}
	if len(out.Backends) < 2 {
		t.Errorf("backends %v; want every registered one", out.Backends)
	}
}

// BenchmarkDiscover measures cold discovery, every backend probed for the
// first time, so each iteration is a fresh process; ns/op is the Discover
// call timed inside it (process start is not counted).
func BenchmarkDiscover(b *testing.B) {
	for _, c := range []struct {
		name string
		env  []string
	}{{"nothing-installed", nothingInstalled}, {"this-machine", nil}} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				total += time.Duration(runHelper(b, c.env...).ElapsedNS)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}
