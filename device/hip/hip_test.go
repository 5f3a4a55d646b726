package hip_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/ffi"
)

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

func TestRegistered(t *testing.T) {
	for _, b := range device.Backends() {
		if b == hip.Backend && b.Name() == "hip" {
			return
		}
	}
	t.Fatal("hip.Backend is not registered")
}

// On a machine without an AMD GPU (CI) the real runtime loads and reports
// hipErrorNoDevice; with a GPU the devices must work.
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
		return
	}
	for _, d := range info.Devices {
		t.Run(d.Type().String(), func(t *testing.T) { roundTrip(t, d) })
	}
}

// roundTrip runs on a real AMD GPU only.
func roundTrip(t *testing.T, d device.Device) {
	if got, err := device.Lookup(d.Type(), d.ID()); err != nil || got != d {
		t.Fatalf("Lookup(%v, %d) = %v, %v", d.Type(), d.ID(), got, err)
	}
	const n = 1 << 20
	src := bytes.Repeat([]byte("0123456789abcdef"), n/16)
	a, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	dst := make([]byte, n-8)
	steps := []func() error{
		func() error { return d.CopyToDevice(a, 0, src, s) },
		func() error { return d.CopyOnDevice(b, 0, a, 8, n-8, s) },
		func() error { return ev.Record(s) },
		func() error { return d.WaitSyncEvent(ev.SyncEvent(), nil) },
		func() error { return d.CopyToHost(dst, b, 0, nil) },
		func() error { return ev.Record(nil) },
		func() error { return ev.Synchronize() },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if !bytes.Equal(dst, src[8:]) {
		t.Fatal("round trip changed the data")
	}
	if free, total, err := d.MemoryInfo(); err != nil || total <= 0 || free > total {
		t.Errorf("MemoryInfo = %d, %d, %v", free, total, err)
	}
}

func TestExplicitLibraryMissing(t *testing.T) {
	t.Setenv(hip.EnvLibrary, "/nonexistent/libamdhip64.so")
	live := ffi.LiveAllocations()
	b := hip.NewBackend()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.Probe(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, device.ErrNotFound) {
			t.Fatalf("Probe: %v; want ErrNotFound", err)
		}
		if err != errs[0] {
			t.Errorf("concurrent probes gave different answers: %v, %v", err, errs[0])
		}
	}
	msg := errs[0].Error()
	for _, want := range []string{"not installed", hip.EnvLibrary + "=/nonexistent/libamdhip64.so"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line", msg)
	}
	if n := ffi.LiveAllocations(); n != live {
		t.Errorf("C allocations %d -> %d", live, n)
	}
}

// The C library loads but has none of HIP's functions: an old or wrong
// runtime must be reported by the first symbol missing, never a panic.
func TestMissingSymbol(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses libc.so.6 as a library without HIP symbols")
	}
	t.Setenv(hip.EnvLibrary, "libc.so.6")
	_, err := hip.NewBackend().Probe(context.Background())
	if !errors.Is(err, device.ErrMissingSymbol) || !strings.Contains(err.Error(), "lacks hipGetDeviceCount") {
		t.Fatalf("Probe: %v; want ErrMissingSymbol naming hipGetDeviceCount", err)
	}
}

func TestProbeCancelledBeforeStart(t *testing.T) {
	t.Setenv(hip.EnvLibrary, "/nonexistent/libamdhip64.so")
	b := hip.NewBackend()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Probe(cancelled) = %v", err)
	}
	// A cancelled caller does not use up the one probe.
	if _, err := b.Probe(context.Background()); !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("Probe after cancel = %v; want ErrNotFound", err)
	}
}

func TestVersionFormat(t *testing.T) {
	for v, want := range map[int32]string{50221153: "5.2.21153", 60140092: "6.1.40092", 1234: "1234"} {
		if got := hip.HIPVersion(v); got != want {
			t.Errorf("hipVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

// A file that exists but cannot load (here a 32-bit libc in a 64-bit
// process) is reported as such, not as "not installed".
func TestExplicitLibraryUnloadable(t *testing.T) {
	const lib32 = "/lib32/libc.so.6"
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a 64-bit Linux process")
	}
	if _, err := os.Stat(lib32); err != nil {
		t.Skipf("%s: %v (libc6-i386 provides it)", lib32, err)
	}
	t.Setenv(hip.EnvLibrary, lib32)
	_, err := hip.NewBackend().Probe(context.Background())
	if !errors.Is(err, device.ErrNotFound) || !strings.Contains(err.Error(), "cannot load it") || !strings.Contains(err.Error(), "ELF") {
		t.Fatalf("Probe: %v; want ErrNotFound saying it cannot load the file, and why", err)
	}
}
