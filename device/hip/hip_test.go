package hip_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/hip"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
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
