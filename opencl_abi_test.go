package cdevice_test

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// openclPeer loads the C peer on the OpenCL library the backend loaded.
func openclPeer(t *testing.T) (*opencl.Device, func(string) func(...uintptr) uintptr) {
	dev := firstDevice(t, "opencl").(*opencl.Device)
	info, _ := opencl.Backend.Probe(context.Background())
	lib := ctest.Library(t, "opencl_peer")
	f := func(name string) func(...uintptr) uintptr { return ctest.Func(t, lib, name) }
	ctest.InitRuntime(t, lib, "peer_init", info.Library)
	return dev, f
}

// peerArray has the C peer produce n int32 values from seed on dev, written
// behind its gate, as an ArrowDeviceArray and schema; p is the peer's
// handle for opening the gate.
func peerArray(t *testing.T, dev *opencl.Device, f func(string) func(...uintptr) uintptr, n, seed int) (p uintptr, arr *abi.DeviceArray, sch *abi.Schema) {
	t.Helper()
	errc, err := ffi.Calloc(4) // cl_int out-parameter
	if err != nil {
		t.Fatal(err)
	}
	defer ffi.Free(errc)
	p = f("peer_produce")(dev.Context(), dev.CommandQueue(), boolArg(dev.UsesSVM()), uintptr(n), uintptr(seed), uintptr(errc))
	if p == 0 {
		t.Fatalf("peer_produce: %d", *(*int32)(errc))
	}
	arr, sch = offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
	if r := f("peer_arrow_produce")(p, uintptr(n), uintptr(dev.ID()), uintptr(unsafe.Pointer(sch)), uintptr(unsafe.Pointer(arr))); r != 0 {
		t.Fatalf("peer_arrow_produce = %d", r)
	}
	return p, arr, sch
}

// A C producer hands over an ArrowDeviceArray whose data is written only
// when a gate opens; the import must wait on its cl_event, then read it.
func TestOpenCLImportFromCWaitsOnEvent(t *testing.T) {
	dev, f := openclPeer(t)
	const n, seed = 1000, 7
	for _, onDevice := range []bool{true, false} {
		name := map[bool]string{true: "ImportDeviceArrayOnDevice", false: "ImportDeviceArray"}[onDevice]
		t.Run(name, func(t *testing.T) {
			p, arr, sch := peerArray(t, dev, f, n, seed)
			done := make(chan arrow.Array, 1)
			go func() {
				var a arrow.Array
				var err error
				if onDevice {
					var da *cdevice.DeviceArray
					if da, err = cdevice.ImportDeviceArrayOnDevice(context.Background(), arr, sch); err == nil {
						a, err = da.ToHost(context.Background())
						da.Release()
					}
				} else {
					a, err = cdevice.ImportDeviceArray(context.Background(), arr, sch)
				}
				if err != nil {
					t.Error(err)
				}
				done <- a
			}()
			select {
			case <-done:
				t.Fatal("the import returned while the producer's event was still pending")
			case <-time.After(100 * time.Millisecond):
			}
			if r := f("peer_open_gate")(p); r != 0 {
				t.Fatalf("peer_open_gate = %d", r)
			}
			a := <-done
			if a == nil {
				return
			}
			defer a.Release()
			vals := a.(*array.Int32).Int32Values()
			for i, v := range vals {
				if v != seed+int32(i) {
					t.Fatalf("value %d = %d, want %d", i, v, seed+int32(i))
				}
			}
			if len(vals) != n {
				t.Fatalf("%d values, want %d", len(vals), n)
			}
		})
	}
}

// The import's context bounds an import's wait on a producer's event that does not
// complete: the import fails with the context's error and releases the
// input (this peer's release itself waits for its event, so the gate opens
// from another thread a little later).
func TestOpenCLImportContextBoundsEventWait(t *testing.T) {
	dev, f := openclPeer(t)
	const n = 64
	imports := map[string]func(context.Context, *abi.DeviceArray, *abi.Schema) error{
		"ImportDeviceArray": func(ctx context.Context, arr *abi.DeviceArray, sch *abi.Schema) error {
			_, err := cdevice.ImportDeviceArray(ctx, arr, sch)
			return err
		},
		"ImportDeviceArrayOnDevice": func(ctx context.Context, arr *abi.DeviceArray, sch *abi.Schema) error {
			_, err := cdevice.ImportDeviceArrayOnDevice(ctx, arr, sch)
			return err
		},
	}
	for name, imp := range imports {
		t.Run(name, func(t *testing.T) {
			before := cdevice.LiveLeaks()
			p, arr, sch := peerArray(t, dev, f, n, 1)
			if r := f("peer_open_gate_after")(p, 150); r != 0 {
				t.Fatal("pthread_create failed")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if err := imp(ctx, arr, sch); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("import of an array whose event is pending: %v, want context.DeadlineExceeded", err)
			}
			if !arr.Array.Released() || !sch.Released() {
				t.Error("a failed import did not release its input")
			}
			if got := cdevice.LiveLeaks(); got.Imports() != before.Imports() || got.DeviceArrays != before.DeviceArrays {
				t.Errorf("held after the failed import: %s (before: %s)", got, before)
			}
		})
	}
}

// A C consumer reads our exported OpenCL ArrowDeviceArray after waiting on
// our sync_event.
func TestOpenCLExportToC(t *testing.T) {
	dev, f := openclPeer(t)
	const n, seed = 5000, -40
	b := array.NewInt32Builder(memory.DefaultAllocator)
	for i := range n {
		b.Append(seed + int32(i))
	}
	a := b.NewArray()
	b.Release()
	defer a.Release()
	for _, sliced := range []bool{false, true} {
		src := a
		want := int32(seed)
		if sliced {
			src = array.NewSlice(a, 10, int64(n))
			defer src.Release()
			want += 10
		}
		da, err := cdevice.CopyToDevice(context.Background(), src, dev)
		if err != nil {
			t.Fatal(err)
		}
		arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
		err = da.Export(arr, sch)
		da.Release()
		if err != nil {
			t.Fatal(err)
		}
		if r := int32(f("peer_arrow_consume")(dev.CommandQueue(), boolArg(dev.UsesSVM()), uintptr(unsafe.Pointer(sch)), uintptr(unsafe.Pointer(arr)), uintptr(want))); r != 0 {
			t.Errorf("sliced=%v: peer_arrow_consume = %d", sliced, r)
		}
	}
	if l := cdevice.LiveLeaks(); l.Exports() != 0 || l.DeviceArrays != 0 {
		t.Errorf("after the C consumer released: %s", l)
	}
	_ = device.CPU
}
