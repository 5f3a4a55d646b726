package testsupport

import (
	"context"
	"os"
	"testing"

	"github.com/purearrow/cdevice/device"
)

// BackendDevice returns the first device of the registered backend name
// ("opencl", "hip"), or skips saying why there is none. Where the device
// is expected it fails instead: under CI for OpenCL (CI installs PoCL), and
// for HIP under CI with CDEVICE_HIP_LIBRARY set (the leg that configures
// chipStar; elsewhere CI's HIP library finds no device).
func BackendDevice(t testing.TB, name string) device.Device {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" && (name != "hip" || os.Getenv("CDEVICE_HIP_LIBRARY") != "") {
		skip = t.Fatalf
	}
	for _, b := range device.Backends() {
		if b.Name() != name {
			continue
		}
		info, err := b.Probe(context.Background())
		if err != nil || len(info.Devices) == 0 {
			skip("needs a %s device: %v", name, err)
		}
		return info.Devices[0]
	}
	skip("needs a %s device: no %s backend is registered (import its package)", name, name)
	return nil
}
