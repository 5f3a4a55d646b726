package cai_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// TestErrorPaths drives every exported function of the package into
// failure and checks that each error wraps its path's documented sentinel
// (TestImportRefusals and TestExportRefusals go through every refused
// descriptor and type).
func TestErrorPaths(t *testing.T) {
	p := devBytes(t, fake, make([]byte, 64))
	desc := func() *cai.Interface {
		return &cai.Interface{Shape: []int64{4}, Typestr: ne + "f8", Version: 3, Data: cai.Data{Ptr: p}}
	}
	// failingWaits is a CUDA device whose runtime fails to wait for a
	// producer's stream.
	failingWaits := newFakeCUDA(9)
	failingWaits.waitErr = &device.RuntimeError{Runtime: "cuda", Call: "cudaStreamWaitEvent", Code: 400, Message: "invalid resource handle"}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	onFake := func(t *testing.T, js string, dt arrow.DataType) *cdevice.DeviceArray {
		a := fromJSON(t, dt, js)
		t.Cleanup(a.Release)
		da := toDevice(t, a, fake)
		t.Cleanup(da.Release)
		return da
	}
	cases := []testsupport.ErrorCase{
		testsupport.Case("ArrowType/malformed", cai.ErrInvalid, func(t *testing.T) error {
			_, err := cai.ArrowType("zz")
			return err
		}),
		testsupport.Case("ArrowType/complex", cai.ErrUnsupported, func(t *testing.T) error {
			_, err := cai.ArrowType(ne + "c16")
			return err
		}),
		testsupport.Case("Typestr/nil", cai.ErrInvalid, func(t *testing.T) error {
			_, err := cai.Typestr(nil)
			return err
		}),
		testsupport.Case("Typestr/utf8", cai.ErrUnsupported, func(t *testing.T) error {
			_, err := cai.Typestr(arrow.BinaryTypes.String)
			return err
		}),
		testsupport.Case("Validate/nil", cai.ErrInvalid, func(t *testing.T) error {
			return (*cai.Interface)(nil).Validate()
		}),
		testsupport.Case("Validate/negative version", cai.ErrInvalid, func(t *testing.T) error {
			d := desc()
			d.Version = -1
			return d.Validate()
		}),
		testsupport.Case("Validate/future version", cai.ErrUnsupported, func(t *testing.T) error {
			d := desc()
			d.Version = 4
			return d.Validate()
		}),
		testsupport.Case("StreamKind/nil", cai.ErrInvalid, func(t *testing.T) error {
			_, err := (*cai.Interface)(nil).StreamKind()
			return err
		}),
		testsupport.Case("StreamKind/stream 0", cai.ErrInvalid, func(t *testing.T) error {
			d := desc()
			d.Stream = ptr(0)
			_, err := d.StreamKind()
			return err
		}),
		testsupport.Case("UnmarshalJSON/nil", cai.ErrInvalid, func(t *testing.T) error {
			return (*cai.Interface)(nil).UnmarshalJSON([]byte(`{}`))
		}),
		testsupport.Case("UnmarshalJSON/not JSON", cai.ErrInvalid, func(t *testing.T) error {
			return new(cai.Interface).UnmarshalJSON([]byte(`{"shape": [`))
		}),
		testsupport.Case("UnmarshalJSON/no shape", cai.ErrInvalid, func(t *testing.T) error {
			return new(cai.Interface).UnmarshalJSON([]byte(`{"typestr": "<f8", "data": [0, true], "version": 3}`))
		}),
		testsupport.Case("UnmarshalJSON/subarray field", cai.ErrUnsupported, func(t *testing.T) error {
			return new(cai.Interface).UnmarshalJSON([]byte(`{"shape": [1], "typestr": "|V8", "data": [0, true], "version": 3, "descr": [["x", "<f4", [2]]]}`))
		}),
		testsupport.Case("Import/canceled", context.Canceled, func(t *testing.T) error {
			_, err := cai.Import(canceled, desc(), cai.WithDevice(fake))
			return err
		}),
		testsupport.Case("Import/nil", cai.ErrInvalid, func(t *testing.T) error {
			_, err := cai.Import(ctx, nil, cai.WithDevice(fake))
			return err
		}),
		testsupport.Case("Import/nil owner", cai.ErrInvalid, func(t *testing.T) error {
			_, err := cai.Import(ctx, desc(), cai.WithDevice(fake), cai.WithOwner(nil))
			return err
		}),
		testsupport.Case("Import/0-d", cai.ErrUnsupported, func(t *testing.T) error {
			d := desc()
			d.Shape = []int64{}
			_, err := cai.Import(ctx, d, cai.WithDevice(fake))
			return err
		}),
		testsupport.Case("Import/CPU device", cai.ErrNotCUDA, func(t *testing.T) error {
			_, err := cai.Import(ctx, desc(), cai.WithDevice(device.CPU))
			return err
		}),
		testsupport.Case("Import/no stream waiter", cai.ErrUnsupported, func(t *testing.T) error {
			d := desc()
			d.Stream = ptr(9)
			_, err := cai.Import(ctx, d, cai.WithDevice(noWaiter{device.CPU}))
			return err
		}),
		testsupport.Case("Import/stream wait fails", cdevice.ErrRuntime, func(t *testing.T) error {
			d := desc()
			d.Stream = ptr(9)
			_, err := cai.Import(ctx, d, cai.WithDevice(failingWaits))
			return err
		}),
		testsupport.Case("Export/nil", cai.ErrInvalid, func(t *testing.T) error {
			_, err := cai.Export(ctx, nil)
			return err
		}),
		testsupport.Case("Export/canceled", context.Canceled, func(t *testing.T) error {
			_, err := cai.Export(canceled, onFake(t, `[1, 2]`, arrow.PrimitiveTypes.Int64))
			return err
		}),
		testsupport.Case("Export/CPU array", cai.ErrNotCUDA, func(t *testing.T) error {
			a := fromJSON(t, arrow.PrimitiveTypes.Int64, `[1, 2]`)
			defer a.Release()
			da := toDevice(t, a, device.CPU)
			defer da.Release()
			_, err := cai.Export(ctx, da)
			return err
		}),
		testsupport.Case("Export/utf8", cai.ErrUnsupported, func(t *testing.T) error {
			_, err := cai.Export(ctx, onFake(t, `["a"]`, arrow.BinaryTypes.String))
			return err
		}),
	}
	testsupport.RunErrorCases(t, cases)
}

// Import of a descriptor with no device given looks for cuda:0: without a
// CUDA backend loaded that is cdevice.ErrUnknownDevice. The other tests of this
// binary load the CUDA test double, so the check runs in a process of its
// own unless none has yet.
func TestImportWithoutCUDABackend(t *testing.T) {
	const child = "CDEVICE_CAI_NO_CUDA_CHILD"
	if _, err := device.Lookup(abi.DeviceCUDA, 0); err != nil || os.Getenv(child) == "1" {
		d := cai.Interface{Shape: []int64{4}, Typestr: ne + "f8", Version: 3, Data: cai.Data{Ptr: devBytes(t, fake, make([]byte, 32))}}
		da, err := cai.Import(ctx, &d)
		if da != nil {
			da.Release()
		}
		testsupport.WantError(t, "Import without a CUDA backend", err, cdevice.ErrUnknownDevice)
		return
	}
	cmd := selfexec.Command([]string{child + "=1"}, "-test.run=^TestImportWithoutCUDABackend$")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
