package dlpack_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// noStreams is the CPU with a runtime whose NewStream fails.
type noStreams struct{ device.Device }

func (noStreams) NewStream() (device.Stream, error) {
	return nil, &device.RuntimeError{Runtime: "fault", Call: "NewStream", Code: 2, Message: "injected"}
}

// bools is a DeviceArray of 8 booleans in CPU memory whose Device is dev
// (nil: no backend, as an import without one); released when the test
// ends.
func bools(t *testing.T, dev device.Device, dt abi.DeviceType) *cdevice.DeviceArray {
	t.Helper()
	p, err := device.CPU.Alloc(1)
	must(t, err)
	a := cdevice.NewDeviceArray(cdevice.DeviceArray{
		Type: arrow.FixedWidthTypes.Boolean, Length: 8,
		Buffers:    []cdevice.DeviceBuffer{{}, {Ptr: p, Size: 1}},
		DeviceType: dt, DeviceID: 0, Device: dev,
	}, func() { device.CPU.Free(p) })
	t.Cleanup(a.Release)
	return a
}

// TestErrorPaths drives Import, ImportLegacy, Export and ExportLegacy into
// each kind of failure and checks that the error wraps its path's
// documented sentinel (TestImportRefusals and TestExportRefusals go
// through every refused type and layout).
func TestErrorPaths(t *testing.T) {
	c := loadC(t)
	base := spec{versioned: true, devType: abi.DeviceCPU, dtype: dtI32, shape: []int64{4, 6}, seed: 1}
	tensor := func(t *testing.T, f func(*spec)) uintptr {
		s := base
		s.shape = append([]int64(nil), base.shape...)
		f(&s)
		p := c.produce(s.params(t), 0, 0)
		if p == 0 {
			t.Fatal("dl_produce failed")
		}
		return p
	}
	versioned := func(t *testing.T, f func(*spec), opts ...dlpack.ImportOption) error {
		_, err := dlpack.Import(context.Background(), dlpack.ManagedTensorVersionedAt(tensor(t, f)), opts...)
		return err
	}
	legacy := func(t *testing.T, f func(*spec)) error {
		_, err := dlpack.ImportLegacy(context.Background(), dlpack.ManagedTensorAt(tensor(t, func(s *spec) { s.versioned = false; f(s) })))
		return err
	}
	i32 := arrow.PrimitiveTypes.Int32
	cases := []testsupport.ErrorCase{
		testsupport.Case("Import/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := dlpack.Import(context.Background(), nil)
			return err
		}),
		testsupport.Case("Import/major version 2", dlpack.ErrVersion, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.major = 2 })
		}),
		testsupport.Case("Import/transposed", dlpack.ErrNotContiguous, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.strides = []int64{1, 4} })
		}),
		testsupport.Case("Import/no backend", cdevice.ErrUnknownDevice, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.devType = abi.DeviceVulkan })
		}),
		testsupport.Case("Import/no such device", cdevice.ErrUnknownDevice, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.devType, s.devID = abi.DeviceOpenCL, 42 })
		}),
		testsupport.Case("Import/unknown device type", cdevice.ErrInvalid, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.devType = 99 })
		}),
		testsupport.Case("Import/complex dtype", cdevice.ErrUnsupported, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.dtype = dlpack.DataType{Code: dlpack.CodeComplex, Bits: 64, Lanes: 1} })
		}),
		testsupport.Case("Import/negative shape", cdevice.ErrInvalid, func(t *testing.T) error {
			return versioned(t, func(s *spec) { s.shape[1] = -6 })
		}),
		testsupport.Case("Import/WithType that does not fit", cdevice.ErrInvalid, func(t *testing.T) error {
			return versioned(t, func(*spec) {}, dlpack.WithType(arrow.FixedSizeListOf(4, i32)))
		}),
		testsupport.Case("ImportLegacy/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := dlpack.ImportLegacy(context.Background(), nil)
			return err
		}),
		testsupport.Case("ImportLegacy/transposed", dlpack.ErrNotContiguous, func(t *testing.T) error {
			return legacy(t, func(s *spec) { s.strides = []int64{1, 4} })
		}),
		testsupport.Case("ImportLegacy/no backend", cdevice.ErrUnknownDevice, func(t *testing.T) error {
			return legacy(t, func(s *spec) { s.devType = abi.DeviceVulkan })
		}),
		testsupport.Case("Export/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := dlpack.Export(context.Background(), nil)
			return err
		}),
		testsupport.Case("Export/not a tensor type", cdevice.ErrUnsupported, func(t *testing.T) error {
			_, err := dlpack.Export(context.Background(), onDevice(t, buildJSON(t, arrow.BinaryTypes.String, `["a"]`), cpuDev))
			return err
		}),
		testsupport.Case("Export/nulls", dlpack.ErrNulls, func(t *testing.T) error {
			_, err := dlpack.Export(context.Background(), onDevice(t, buildJSON(t, i32, `[1, null, 3]`), cpuDev))
			return err
		}),
		testsupport.Case("Export/copy on a device with no backend", cdevice.ErrNotReadable, func(t *testing.T) error {
			_, err := dlpack.Export(context.Background(), bools(t, nil, abi.DeviceVulkan))
			return err
		}),
		testsupport.Case("Export/copy fails in the runtime", cdevice.ErrRuntime, func(t *testing.T) error {
			_, err := dlpack.Export(context.Background(), bools(t, noStreams{device.CPU}, abi.DeviceCPU))
			return err
		}),
		testsupport.Case("ExportLegacy/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := dlpack.ExportLegacy(context.Background(), nil)
			return err
		}),
		testsupport.Case("ExportLegacy/nulls", dlpack.ErrNulls, func(t *testing.T) error {
			_, err := dlpack.ExportLegacy(context.Background(), onDevice(t, buildJSON(t, i32, `[null]`), cpuDev))
			return err
		}),
	}
	testsupport.RunErrorCases(t, cases)
	c.collect()
	if n := cdevice.LiveLeaks().ImportedTensors; n != 0 {
		t.Errorf("%d imports held after the failures", n)
	}
}
