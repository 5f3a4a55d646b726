package cuda_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// eachAPI runs f on the runtime API and on the driver API, each on its
// C test double.
func eachAPI(t *testing.T, f func(t *testing.T, rt gpurttest.Runtime)) {
	for _, rt := range cuda.APIs {
		t.Run(rt.Table.API.String(), func(t *testing.T) { f(t, rt) })
	}
}

// TestGPURT runs internal/gpurt's tests (the C test double with fault
// injection, libraries that are absent or not CUDA) on the CUDA tables:
// the runtime's and the driver API's.
func TestGPURT(t *testing.T) { eachAPI(t, gpurttest.Run) }

func TestComputeCapability(t *testing.T) {
	eachAPI(t, func(t *testing.T, rt gpurttest.Runtime) {
		f := gpurttest.NewFake(t, rt, 2)
		for _, d := range f.Probe() {
			if maj, min := d.(*cuda.Device).ComputeCapability(); maj != 9 || min != 0 {
				t.Errorf("%v: compute capability %d.%d", d, maj, min)
			}
		}
	})
}

func TestErrorName(t *testing.T) {
	want := map[string]string{"runtime": "cudaErrorMemoryAllocation", "driver": "CUDA_ERROR_OUT_OF_MEMORY"}
	eachAPI(t, func(t *testing.T, rt gpurttest.Runtime) {
		f := gpurttest.NewFake(t, rt, 1)
		d := f.Probe()[0].(*cuda.Device)
		if got := d.ErrorName(2); got != want[rt.Table.API.String()] {
			t.Errorf("ErrorName(2) = %q", got)
		}
	})
}

func TestCandidates(t *testing.T) {
	t.Setenv(cuda.EnvLibrary, "/opt/x/libcudart.so.12")
	if c := cuda.Candidates(); !slices.Equal(c, []string{"/opt/x/libcudart.so.12"}) {
		t.Errorf("with %s set: %v", cuda.EnvLibrary, c)
	}
	t.Setenv(cuda.EnvLibrary, "")
	c := cuda.Candidates()
	switch runtime.GOOS {
	case "linux":
		if len(c) < 4 || c[0] != "libcudart.so.13" || c[1] != "libcudart.so.12" {
			t.Errorf("candidates %v", c)
		}
	case "windows":
		if len(c) < 3 || c[0] != "cudart64_13.dll" {
			t.Errorf("candidates %v", c)
		}
	}

	t.Setenv(cuda.EnvDriverLibrary, "/opt/x/libcuda.so.1")
	if c := cuda.DriverCandidates(); !slices.Equal(c, []string{"/opt/x/libcuda.so.1"}) {
		t.Errorf("with %s set: %v", cuda.EnvDriverLibrary, c)
	}
	t.Setenv(cuda.EnvDriverLibrary, "")
	c = cuda.DriverCandidates()
	switch runtime.GOOS {
	case "linux":
		if len(c) < 2 || c[0] != "libcuda.so.1" {
			t.Errorf("driver candidates %v", c)
		}
	case "windows":
		if !slices.Equal(c, []string{"nvcuda.dll"}) {
			t.Errorf("driver candidates %v", c)
		}
	}
}
