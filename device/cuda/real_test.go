package cuda_test

import (
	"testing"

	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/gpurt/gpurttest"
)

// Tests named Real use the libraries a GPU machine has (a real libcudart
// and libcuda, or whatever $CDEVICE_CUDA_LIBRARY and
// $CDEVICE_CUDA_DRIVER_LIBRARY name), each API on its own, and skip when
// there is no library or no device: go test ./device/cuda -run Real -v on
// a GPU machine. A bad stream or event handle is undefined behaviour on a
// real GPU (the runtime dereferences it): tests of bad handles run only on
// the doubles.

func TestReal(t *testing.T) { eachAPI(t, gpurttest.RunReal) }

func TestRealCUDA(t *testing.T) {
	names := map[string]string{"runtime": "cudaErrorMemoryAllocation", "driver": "CUDA_ERROR_OUT_OF_MEMORY"}
	eachAPI(t, func(t *testing.T, rt gpurttest.Runtime) {
		for _, d := range gpurttest.RealDevices(t, rt) {
			maj, min := d.(*cuda.Device).ComputeCapability()
			t.Logf("%v: sm_%d%d", d, maj, min)
			if maj < 3 {
				t.Errorf("%v: compute capability %d.%d", d, maj, min)
			}
			if name := d.ErrorName(2); name != names[rt.Table.API.String()] {
				t.Errorf("ErrorName(2) = %q", name)
			}
		}
	})
}

// An array exported through one API is imported through the other, on the
// GPU: the sync_event one made is waited for by the other.
func TestRealMixedAPIs(t *testing.T) {
	rtDevs := gpurttest.RealDevices(t, cuda.Runtime)
	drvDevs := gpurttest.RealDevices(t, cuda.Driver)
	t.Run("RuntimeToDriver", func(t *testing.T) { exportImport(t, rtDevs[0], drvDevs[0], nil) })
	t.Run("DriverToRuntime", func(t *testing.T) { exportImport(t, drvDevs[0], rtDevs[0], nil) })
}

func BenchmarkRealCopyToDevice(b *testing.B) {
	for _, rt := range cuda.APIs {
		b.Run(rt.Table.API.String(), func(b *testing.B) { gpurttest.BenchmarkCopy(b, rt, true) })
	}
}

func BenchmarkRealToHost(b *testing.B) {
	for _, rt := range cuda.APIs {
		b.Run(rt.Table.API.String(), func(b *testing.B) { gpurttest.BenchmarkCopy(b, rt, false) })
	}
}
