package cuda_test

import (
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
)

// Tests named Real use the library cuda.Backend finds (a real libcudart, or
// whatever $CDEVICE_CUDA_LIBRARY names) and skip when there is no runtime
// or no device: go test ./device/cuda -run Real on a GPU machine.

func TestReal(t *testing.T) { gpurttest.RunReal(t, cuda.Runtime) }

func TestRealCUDA(t *testing.T) {
	for _, d := range gpurttest.RealDevices(t, cuda.Runtime) {
		maj, min := d.(*cuda.Device).ComputeCapability()
		t.Logf("%v: sm_%d%d", d, maj, min)
		if maj < 3 {
			t.Errorf("%v: compute capability %d.%d", d, maj, min)
		}
		if name := d.ErrorName(2); name != "cudaErrorMemoryAllocation" {
			t.Errorf("ErrorName(2) = %q", name)
		}
	}
}

func BenchmarkRealCopyToDevice(b *testing.B) { gpurttest.BenchmarkCopy(b, cuda.Runtime, true) }
func BenchmarkRealToHost(b *testing.B)       { gpurttest.BenchmarkCopy(b, cuda.Runtime, false) }
