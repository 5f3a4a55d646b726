package cuda_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	cdevice "github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// An ArrowDeviceArray of managed memory is read in place (after its event)
// only where the GPU lets the host touch managed memory while it works
// (cudaDevAttrConcurrentManagedAccess 1); where it is 0 (Windows, WSL,
// GPUs before Pascal), ImportDeviceArray reads it through copies.
func TestImportManagedConcurrentAccess(t *testing.T) {
	// Cached blocks would outlive each subtest's double.
	old := cdevice.SetMemoryCacheLimit(0)
	defer cdevice.SetMemoryCacheLimit(old)
	for _, tc := range []struct {
		name       string
		concurrent uintptr
		copies     bool
	}{{"Concurrent", 1, false}, {"NotConcurrent", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := gpurttest.NewFake(t, cuda.Runtime, 1)
			f.Call("fake_cuda_set_concurrent_managed", tc.concurrent)
			var dev device.Device
			for _, d := range f.Probe() {
				if d.Type() == abi.DeviceCUDAManaged {
					dev = d
				}
			}
			if dev == nil {
				t.Fatal("no cuda_managed device")
			}
			if dev.HostAccessible() == tc.copies {
				t.Errorf("%v: HostAccessible() = %v with cudaDevAttrConcurrentManagedAccess %d", dev, dev.HostAccessible(), tc.concurrent)
			}
			device.Register(dev)

			b := array.NewInt32Builder(memory.DefaultAllocator)
			defer b.Release()
			b.AppendValues([]int32{1, 2, 3, 4, 5}, nil)
			src := b.NewInt32Array()
			defer src.Release()
			arr, sch := exportToC(t, src, dev)
			memcpys := func() uintptr { return f.Call("fake_cuda_call_count", cstr(t, "cudaMemcpyAsync")) }
			before := memcpys()
			got, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if n := memcpys() - before; (n > 0) != tc.copies {
				t.Errorf("import made %d copies with cudaDevAttrConcurrentManagedAccess %d", n, tc.concurrent)
			}
			if !array.Equal(got, src) {
				t.Errorf("imported %v, want %v", got, src)
			}
		})
	}
}

func cstr(t *testing.T, s string) uintptr {
	p, err := ffi.CString(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(p) })
	return uintptr(p)
}
