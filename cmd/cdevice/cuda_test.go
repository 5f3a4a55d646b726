package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// A GPU node with the NVIDIA driver but no CUDA toolkit has libcuda and
// no libcudart: the command finds the GPU through the driver API (here
// the driver API's C test double), says so and why, and the selftest
// passes on it. Every device of it: device, pinned host and managed memory.
func TestDriverAPIOnly(t *testing.T) {
	fake := ctest.Path(t, "fakecuda")
	env := []string{"CDEVICE_CUDA_LIBRARY=/nonexistent/libcudart.so.12", "CDEVICE_CUDA_DRIVER_LIBRARY=" + fake,
		"FAKE_CUDA_DEVICES=1", "CDEVICE_OPENCL_LIBRARY=/nonexistent"}
	devs := availableDevices(t, env...)
	want := []string{"cuda:0", "cuda_host:0", "cuda_managed:0"}
	for _, b := range runJSON(t, env...).Backends {
		if b.Name == "cuda" && (b.Version != "driver API 12.9" || !strings.HasPrefix(b.Note, "driver API, as the runtime API cannot serve")) {
			t.Errorf("cuda in --json: version %q, note %q", b.Version, b.Note)
		}
	}
	for _, d := range want {
		if !slices.Contains(devs, d) {
			t.Fatalf("devices %v lack %s", devs, d)
		}
	}
	r := runCommand(t, env, "devices")
	for _, s := range []string{"driver API 12.9", "cuda: driver API, as the runtime API cannot serve: not installed",
		"Fake CUDA Device 0 (managed memory)", "default: cuda:0"} {
		if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), s) {
			t.Errorf("cdevice devices does not say %q:\n%s", s, r.stdout)
		}
	}
	for _, d := range want {
		checkSelftest(t, runCommand(t, env, "selftest", "--json", "--device", d), []string{d})
	}

	// CDEVICE_CUDA_API picks one API: the runtime is absent here.
	r = runCommand(t, append(env, "CDEVICE_CUDA_API=runtime"), "devices")
	if !strings.Contains(r.stdout, "cuda: not installed: tried CDEVICE_CUDA_LIBRARY=/nonexistent/libcudart.so.12") ||
		strings.Contains(r.stdout, "cuda:0") {
		t.Errorf("CDEVICE_CUDA_API=runtime:\n%s", r.stdout)
	}
	r = runCommand(t, append(env, "CDEVICE_CUDA_API=driver"), "devices")
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "cuda: driver API, as CDEVICE_CUDA_API=driver asks") {
		t.Errorf("CDEVICE_CUDA_API=driver:\n%s", r.stdout)
	}
	r = runCommand(t, append(env, "CDEVICE_CUDA_API=both"), "devices")
	if !strings.Contains(r.stdout, `cuda: CDEVICE_CUDA_API="both": want "runtime" or "driver"`) {
		t.Errorf("CDEVICE_CUDA_API=both:\n%s", r.stdout)
	}
}
