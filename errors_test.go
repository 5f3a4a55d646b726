package cdevice_test

// The error paths of every exported function of the package: each is driven
// into failure and its error must wrap the sentinel of that path, which the
// README's error table documents (testsupport.Documented).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

var readmeSentinel = regexp.MustCompile("`([a-z]+\\.[A-Z][A-Za-z]*)`")

// TestREADMEErrorTable: docs/errors.md's error table names exactly the
// documented sentinels, row by row with their aliases, and the aliases are
// one value.
func TestREADMEErrorTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			if len(rows) > 0 && !strings.HasPrefix(line, "|") {
				break // the first table is the sentinels'
			}
			continue
		}
		cell := strings.SplitN(line, " | ", 2)[0]
		var names []string
		for _, m := range readmeSentinel.FindAllStringSubmatch(cell, -1) {
			names = append(names, m[1])
		}
		rows = append(rows, names)
	}
	var want [][]string
	for _, s := range testsupport.Documented {
		want = append(want, s.Names)
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("README error table rows:\n%q\ntestsupport.Documented:\n%q", rows, want)
	}
	aliases := []struct {
		name string
		a, b error
	}{
		{"device.ErrInvalid", device.ErrInvalid, cdevice.ErrInvalid},
		{"device.ErrReleased", device.ErrReleased, cdevice.ErrReleased},
		{"stream.ErrReleased", stream.ErrReleased, cdevice.ErrReleased},
		{"device.ErrUnknownDevice", device.ErrUnknownDevice, cdevice.ErrUnknownDevice},
		{"device.ErrRuntime", device.ErrRuntime, cdevice.ErrRuntime},
	}
	for _, a := range aliases {
		if a.a != a.b {
			t.Errorf("%s is not the value the table says it is", a.name)
		}
	}
	// No two rows are one value.
	for i, s := range testsupport.Documented {
		for _, o := range testsupport.Documented[i+1:] {
			if s.Err == o.Err {
				t.Errorf("%s and %s are one value: one row", s.Names[0], o.Names[0])
			}
		}
	}
}

// unknownType is a data type with an id no format string has.
type unknownType struct{ arrow.NullType }

func (*unknownType) ID() arrow.Type { return arrow.Type(250) }

// cString is s in C memory, freed when the test ends.
func cString(t *testing.T, s string) uintptr {
	p, err := ffi.CString(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ffi.Free(p) })
	return uintptr(p)
}

// exportedInt32 is an int32 array of n values exported from Go, as a C
// producer would hand it over.
func exportedInt32(t *testing.T, n int) (*abi.Array, *abi.Schema) {
	t.Helper()
	a, s := offHeap[abi.Array](t), offHeap[abi.Schema](t)
	if err := cdevice.ExportArray(int64Array(t, n), a, s); err != nil {
		t.Fatal(err)
	}
	return a, s
}

// exportedDevice is an int64 ArrowDeviceArray on the CPU of n values,
// then relabelled as on device type dt, id.
func exportedDevice(t *testing.T, n int, dt abi.DeviceType, id int64) (*abi.DeviceArray, *abi.Schema) {
	t.Helper()
	da, err := cdevice.CopyToDevice(context.Background(), int64Array(t, n), device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Release()
	arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
	if err := da.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	arr.DeviceType, arr.DeviceID = dt, id
	return arr, sch
}

// exportedBatch is a record batch exported from Go (struct array and schema).
func exportedBatch(t *testing.T) (*abi.Array, *abi.Schema) {
	t.Helper()
	a, s := offHeap[abi.Array](t), offHeap[abi.Schema](t)
	if err := cdevice.ExportRecordBatch(wideBatch(t), a, s); err != nil {
		t.Fatal(err)
	}
	return a, s
}

// corruptStrings is a utf8 array whose offsets decrease: only full
// validation sees it.
func corruptStrings(t *testing.T) arrow.Array {
	offs := arrow.Int32Traits.CastToBytes([]int32{0, 3, 1})
	a := array.MakeFromData(array.NewData(arrow.BinaryTypes.String, 2,
		[]*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes([]byte("abc"))}, nil, 0, 0))
	t.Cleanup(a.Release)
	return a
}

// noBackend is an imported array on a device no backend owns (metadata
// only).
func noBackend(t *testing.T) *cdevice.DeviceArray {
	t.Helper()
	arr, sch := exportedDevice(t, 4, abi.DeviceVulkan, 3)
	da, err := cdevice.ImportDeviceArrayOnDevice(context.Background(), arr, sch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(da.Release)
	return da
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// failingStreams is the CPU with NewStream failing in its runtime.
func failingStreams() device.Device {
	return &faultyDevice{Device: device.CPU, call: "NewStream"}
}

func TestErrorPaths(t *testing.T) {
	ctx := context.Background()
	i32 := arrow.PrimitiveTypes.Int32
	cases := []testsupport.ErrorCase{
		// Import.
		testsupport.Case("ImportArray/nil array", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			releaseArrayC(a)
			_, err := cdevice.ImportArray(nil, s)
			return err
		}),
		testsupport.Case("ImportArray/released schema", cdevice.ErrReleased, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			releaseSchemaC(s)
			_, err := cdevice.ImportArray(a, s)
			return err
		}),
		testsupport.Case("ImportArray/unknown format", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			s.Format = cString(t, "?!")
			_, err := cdevice.ImportArray(a, s)
			return err
		}),
		testsupport.Case("ImportArray/nil schema", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			releaseSchemaC(s)
			_, err := cdevice.ImportArray(a, nil)
			return err
		}),
		testsupport.Case("ImportArray/wrong buffer count", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			a.NBuffers = 1
			_, err := cdevice.ImportArray(a, s)
			return err
		}),
		testsupport.Case("ImportArrayWithType/released array", cdevice.ErrReleased, func(t *testing.T) error {
			_, err := cdevice.ImportArrayWithType(offHeap[abi.Array](t), i32)
			return err
		}),
		testsupport.Case("ImportArrayWithType/nil array", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.ImportArrayWithType(nil, i32)
			return err
		}),
		testsupport.Case("ImportArrayWithType/full validation", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := offHeap[abi.Array](t), offHeap[abi.Schema](t)
			if err := cdevice.ExportArray(corruptStrings(t), a, s); err != nil {
				t.Fatal(err)
			}
			releaseSchemaC(s)
			_, err := cdevice.ImportArrayWithType(a, arrow.BinaryTypes.String, cdevice.WithFullValidation())
			return err
		}),
		testsupport.Case("ImportField/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.ImportField(nil)
			return err
		}),
		testsupport.Case("ImportField/released", cdevice.ErrReleased, func(t *testing.T) error {
			_, err := cdevice.ImportField(offHeap[abi.Schema](t))
			return err
		}),
		testsupport.Case("ImportField/zero-size fixed-size list", cdevice.ErrUnsupported, func(t *testing.T) error {
			s := offHeap[abi.Schema](t)
			if err := cdevice.ExportField(arrow.Field{Name: "x", Type: arrow.FixedSizeListOf(1, i32)}, s); err != nil {
				t.Fatal(err)
			}
			s.Format = cString(t, "+w:0")
			_, err := cdevice.ImportField(s)
			return err
		}),
		testsupport.Case("ImportSchema/not a struct", cdevice.ErrInvalid, func(t *testing.T) error {
			s := offHeap[abi.Schema](t)
			if err := cdevice.ExportField(arrow.Field{Name: "x", Type: i32}, s); err != nil {
				t.Fatal(err)
			}
			_, err := cdevice.ImportSchema(s)
			return err
		}),
		testsupport.Case("ImportRecordBatch/not a struct", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedInt32(t, 3)
			_, err := cdevice.ImportRecordBatch(a, s)
			return err
		}),
		testsupport.Case("ImportRecordBatchWithSchema/nil schema", cdevice.ErrInvalid, func(t *testing.T) error {
			a, s := exportedBatch(t)
			releaseSchemaC(s)
			_, err := cdevice.ImportRecordBatchWithSchema(a, nil)
			return err
		}),
		testsupport.Case("ImportRecordBatchWithSchema/released", cdevice.ErrReleased, func(t *testing.T) error {
			_, err := cdevice.ImportRecordBatchWithSchema(offHeap[abi.Array](t), wideBatch(t).Schema())
			return err
		}),
		testsupport.Case("ImportDeviceArray/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.ImportDeviceArray(context.Background(), nil, nil)
			return err
		}),
		testsupport.Case("ImportDeviceArray/CPU with a sync_event", cdevice.ErrInvalid, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceCPU, -1)
			arr.SyncEvent = cString(t, "not an event")
			_, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceArray/no backend", cdevice.ErrUnknownDevice, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceMetal, 0)
			_, err := cdevice.ImportDeviceArray(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceRecordBatch/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.ImportDeviceRecordBatch(context.Background(), nil, nil)
			return err
		}),
		testsupport.Case("ImportDeviceRecordBatch/not a struct", cdevice.ErrInvalid, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceCPU, -1)
			_, err := cdevice.ImportDeviceRecordBatch(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceRecordBatchWithSchema/no backend", cdevice.ErrUnknownDevice, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceMetal, 0)
			releaseSchemaC(sch)
			_, err := cdevice.ImportDeviceRecordBatchWithSchema(context.Background(), arr, wideBatch(t).Schema())
			return err
		}),
		testsupport.Case("ImportDeviceArrayOnDevice/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.ImportDeviceArrayOnDevice(context.Background(), nil, nil)
			return err
		}),
		testsupport.Case("ImportDeviceArrayOnDevice/released", cdevice.ErrReleased, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceCPU, -1)
			releaseArrayC(&arr.Array)
			_, err := cdevice.ImportDeviceArrayOnDevice(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceArrayOnDevice/unknown device type", cdevice.ErrInvalid, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceType(99), 0)
			_, err := cdevice.ImportDeviceArrayOnDevice(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceRecordBatchOnDevice/not a struct", cdevice.ErrInvalid, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceCPU, -1)
			_, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
			return err
		}),
		testsupport.Case("ImportDeviceRecordBatchOnDeviceWithSchema/nil schema", cdevice.ErrInvalid, func(t *testing.T) error {
			arr, sch := exportedDevice(t, 3, abi.DeviceCPU, -1)
			releaseSchemaC(sch)
			_, err := cdevice.ImportDeviceRecordBatchOnDeviceWithSchema(context.Background(), arr, nil)
			return err
		}),
		// Export.
		testsupport.Case("ExportSchema/nil schema", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportSchema(nil, offHeap[abi.Schema](t))
		}),
		testsupport.Case("ExportSchema/unknown type", cdevice.ErrUnsupported, func(t *testing.T) error {
			return cdevice.ExportSchema(arrow.NewSchema([]arrow.Field{{Name: "x", Type: &unknownType{}}}, nil), offHeap[abi.Schema](t))
		}),
		testsupport.Case("ExportField/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportField(arrow.Field{Name: "x", Type: i32}, nil)
		}),
		testsupport.Case("ExportField/nil type", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportField(arrow.Field{Name: "x"}, offHeap[abi.Schema](t))
		}),
		testsupport.Case("ExportArray/nil array", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportArray(nil, offHeap[abi.Array](t), nil)
		}),
		testsupport.Case("ExportArray/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportArray(int64Array(t, 2), nil, nil)
		}),
		testsupport.Case("ExportRecordBatch/nil batch", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportRecordBatch(nil, offHeap[abi.Array](t), nil)
		}),
		testsupport.Case("ExportDeviceArray/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ExportDeviceArray(int64Array(t, 2), nil, nil)
		}),
		// Validation.
		testsupport.Case("ValidateFull/decreasing offsets", cdevice.ErrInvalid, func(t *testing.T) error {
			return cdevice.ValidateFull(corruptStrings(t))
		}),
		testsupport.Case("ValidateRecordBatch/decreasing offsets", cdevice.ErrInvalid, func(t *testing.T) error {
			col := corruptStrings(t)
			rb := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: col.DataType()}}, nil), []arrow.Array{col}, 2)
			defer rb.Release()
			return cdevice.ValidateRecordBatch(rb, cdevice.WithFullValidation())
		}),
		// Devices.
		testsupport.Case("CopyToDevice/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.CopyToDevice(ctx, nil, device.CPU)
			return err
		}),
		testsupport.Case("CopyToDevice/canceled", context.Canceled, func(t *testing.T) error {
			_, err := cdevice.CopyToDevice(canceled(), int64Array(t, 4), device.CPU)
			return err
		}),
		testsupport.Case("CopyToDevice/runtime", cdevice.ErrRuntime, func(t *testing.T) error {
			_, err := cdevice.CopyToDevice(ctx, int64Array(t, 4), failingStreams())
			return err
		}),
		testsupport.Case("CopyRecordBatchToDevice/nil", cdevice.ErrInvalid, func(t *testing.T) error {
			_, err := cdevice.CopyRecordBatchToDevice(ctx, nil, device.CPU)
			return err
		}),
		testsupport.Case("CopyRecordBatchToDevice/canceled", context.Canceled, func(t *testing.T) error {
			_, err := cdevice.CopyRecordBatchToDevice(canceled(), wideBatch(t), device.CPU)
			return err
		}),
		testsupport.Case("CopyRecordBatchToDevice/runtime", cdevice.ErrRuntime, func(t *testing.T) error {
			_, err := cdevice.CopyRecordBatchToDevice(ctx, wideBatch(t), failingStreams())
			return err
		}),
		testsupport.Case("CopyReaderToDevice/nil reader", cdevice.ErrInvalid, func(t *testing.T) error {
			return lastError(cdevice.CopyReaderToDevice(ctx, nil, device.CPU))
		}),
		testsupport.Case("CopyReaderToDevice/canceled", context.Canceled, func(t *testing.T) error {
			rdr, err := array.NewRecordReader(wideBatch(t).Schema(), []arrow.RecordBatch{wideBatch(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer rdr.Release()
			return lastError(cdevice.CopyReaderToDevice(canceled(), rdr, device.CPU))
		}),
		testsupport.Case("DeviceArray.ToHost/no backend", cdevice.ErrNotReadable, func(t *testing.T) error {
			_, err := noBackend(t).ToHost(ctx)
			return err
		}),
		testsupport.Case("DeviceArray.ToHost/canceled", context.Canceled, func(t *testing.T) error {
			da, err := cdevice.CopyToDevice(ctx, int64Array(t, 4), device.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer da.Release()
			_, err = da.ToHost(canceled())
			return err
		}),
		testsupport.Case("DeviceArray.CopyTo/no backend", cdevice.ErrNotReadable, func(t *testing.T) error {
			_, err := noBackend(t).CopyTo(ctx, device.CPU)
			return err
		}),
		testsupport.Case("DeviceArray.Export/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			return noBackend(t).Export(nil, nil)
		}),
		testsupport.Case("DeviceRecordBatch.ToHost/canceled", context.Canceled, func(t *testing.T) error {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, wideBatch(t), device.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Release()
			_, err = db.ToHost(canceled())
			return err
		}),
		testsupport.Case("DeviceRecordBatch.Export/nil out", cdevice.ErrInvalid, func(t *testing.T) error {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, wideBatch(t), device.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Release()
			return db.Export(nil, nil)
		}),
	}
	before := cdevice.LiveLeaks()
	testsupport.RunErrorCases(t, cases)
	if l := cdevice.LiveLeaks(); l.Exports() != before.Exports() || l.Imports() != before.Imports() || l.DeviceArrays != before.DeviceArrays {
		t.Errorf("held after the failed calls: %s (before: %s)", l, before)
	}
}

// lastError runs seq to its end and returns the error it ended with,
// releasing the batches.
func lastError(seq func(yield func(*cdevice.DeviceRecordBatch, error) bool)) error {
	var last error
	for b, err := range seq {
		if b != nil {
			b.Release()
		}
		last = err
	}
	return last
}

// A producer's OpenCL sync event that ended in error (a negative status)
// fails the import with ErrRuntime, whose RuntimeError names OpenCL, and
// the input is released. With a context the import polls the event's
// status; without one it blocks in clWaitForEvents: both fail alike.
func TestOpenCLFailedEventIsErrRuntime(t *testing.T) {
	dev, f := openclPeer(t)
	const n = 64
	for _, c := range []struct{ onDevice, withCtx bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		onDevice := c.onDevice
		name := map[bool]string{true: "ImportDeviceArrayOnDevice", false: "ImportDeviceArray"}[onDevice]
		ctx := context.Background()
		if c.withCtx {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Minute)
			defer cancel()
			name += "/WithDeadline"
		}
		t.Run(name, func(t *testing.T) {
			p, arr, sch := peerArray(t, dev, f, n, 1)
			var err error
			if r := int32(f("peer_fail_event")(p, uintptr(unsafe.Pointer(arr)))); r != 0 {
				t.Fatalf("peer_fail_event = %d", r)
			}
			if onDevice {
				var da *cdevice.DeviceArray
				if da, err = cdevice.ImportDeviceArrayOnDevice(ctx, arr, sch); da != nil {
					da.Release()
				}
			} else {
				var a arrow.Array
				if a, err = cdevice.ImportDeviceArray(ctx, arr, sch); a != nil {
					a.Release()
				}
			}
			testsupport.WantError(t, name, err, cdevice.ErrRuntime)
			var re *device.RuntimeError
			if !errors.As(err, &re) || re.Runtime != "opencl" || re.Code >= 0 {
				t.Errorf("%v: no OpenCL RuntimeError with a negative code in it", err)
			}
			if !arr.Array.Released() || !sch.Released() {
				t.Error("a failed import did not release its input")
			}
		})
	}
}
