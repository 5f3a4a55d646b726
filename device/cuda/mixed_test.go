package cuda_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	cdevice "github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
)

// A CUevent is a cudaEvent_t and a CUstream a cudaStream_t: an array
// exported by a program on one CUDA API is imported by one on the other,
// its sync_event waited for and its memory read through the importer's
// API. Both backends run on the double with both APIs over one state, as
// a real libcudart and libcuda share a GPU.
func TestMixedAPIs(t *testing.T) {
	old := cdevice.SetMemoryCacheLimit(0) // cached blocks would outlive the double
	defer cdevice.SetMemoryCacheLimit(old)
	runtimeAPI, driverAPI := cuda.Runtime, cuda.Driver
	runtimeAPI.Fake, driverAPI.Fake = "fakecuda_mixed", "fakecuda_mixed"
	for _, tc := range []struct {
		name               string
		exporter, importer gpurttest.Runtime
		copyCall, waitCall string // the importer's API: how it reads, and waits on the host for the event
	}{
		{"RuntimeToDriver", runtimeAPI, driverAPI, "cuMemcpyDtoHAsync_v2", "cuEventSynchronize"},
		{"DriverToRuntime", driverAPI, runtimeAPI, "cudaMemcpyAsync", "cudaEventSynchronize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := gpurttest.NewFake(t, tc.exporter, 1)
			exp := f.Probe()[0]
			imp := f.ProbeAs(tc.importer)[0]
			if exp.Type() != abi.DeviceCUDA || imp.Type() != abi.DeviceCUDA {
				t.Fatalf("devices %v, %v", exp, imp)
			}
			calls := func(name string) uintptr { return f.Call("fake_cuda_call_count", cstr(t, name)) }
			copies, waits := calls(tc.copyCall), calls(tc.waitCall)
			exportImport(t, exp, imp, func() {
				if calls(tc.copyCall) == copies || calls(tc.waitCall) == waits {
					t.Errorf("the import did not wait and read through the importer's API (%s, %s)", tc.waitCall, tc.copyCall)
				}
			})
		})
	}
}

// exportImport exports 1000 int64s copied to exp's memory as an
// ArrowDeviceArray and imports it with imp as the device of its type and
// id; imported runs after the import.
func exportImport(t *testing.T, exp, imp device.Device, imported func()) {
	t.Helper()
	device.Register(imp)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 1000 {
		b.Append(int64(i) * 3)
	}
	src := b.NewInt64Array()
	defer src.Release()
	arr, sch := exportToC(t, src, exp)
	got, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if imported != nil {
		imported()
	}
	if !array.Equal(got, src) {
		t.Errorf("imported %v, want %v", got, src)
	}
}

// exportToC copies src to dev and exports it into C memory, freed when
// the test ends, as a C producer would hand it over.
func exportToC(t *testing.T, src arrow.Array, dev device.Device) (*abi.DeviceArray, *abi.Schema) {
	t.Helper()
	da, err := cdevice.CopyToDevice(context.Background(), src, dev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ffi.Calloc(unsafe.Sizeof(abi.DeviceArray{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(out) })
	outSchema, err := ffi.Calloc(unsafe.Sizeof(abi.Schema{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(outSchema) })
	arr, sch := (*abi.DeviceArray)(out), (*abi.Schema)(outSchema)
	err = da.Export(arr, sch)
	da.Release()
	if err != nil {
		t.Fatal(err)
	}
	if arr.SyncEvent == 0 {
		t.Fatal("the export has no sync_event")
	}
	return arr, sch
}
