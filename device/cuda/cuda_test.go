package cuda_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
)

// TestGPURT runs internal/gpurt's tests (the C test double with fault
// injection, libraries that are absent or not CUDA) on the CUDA table.
func TestGPURT(t *testing.T) { gpurttest.Run(t, cuda.Runtime) }

func TestComputeCapability(t *testing.T) {
	f := gpurttest.NewFake(t, cuda.Runtime, 2)
	for _, d := range f.Probe() {
		if maj, min := d.(*cuda.Device).ComputeCapability(); maj != 9 || min != 0 {
			t.Errorf("%v: compute capability %d.%d", d, maj, min)
		}
	}
}

func TestErrorName(t *testing.T) {
	f := gpurttest.NewFake(t, cuda.Runtime, 1)
	d := f.Probe()[0].(*cuda.Device)
	if got := d.ErrorName(2); got != "cudaErrorMemoryAllocation" {
		t.Errorf("ErrorName(2) = %q", got)
	}
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
}
