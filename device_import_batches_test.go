package cdevice_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/identity"
)

// readingDevice is CPU memory presented as a device the host cannot read
// (ext_dev:2) whose ValueReader counts its calls and fails any read of
// the pointer in poison.
type readingDevice struct {
	device.Device
	calls  atomic.Int64
	poison atomic.Uintptr
}

var errPoisoned = errors.New("a read of the poisoned buffer")

func (*readingDevice) Type() abi.DeviceType { return abi.DeviceExtDev }
func (*readingDevice) ID() int64            { return 2 }
func (*readingDevice) Name() string         { return "reading ext_dev:2" }
func (*readingDevice) HostAccessible() bool { return false }

func (d *readingDevice) ReadValues(_ context.Context, _ []uintptr, reads []device.ValueRead) error {
	d.calls.Add(1)
	for i := range reads {
		r := &reads[i]
		if uintptr(r.Ptr) == d.poison.Load() {
			return errPoisoned
		}
		r.Set(unsafe.Slice((*byte)(unsafe.Add(abi.Pointer(uintptr(r.Ptr)), r.Off)), r.Width))
	}
	return nil
}

var reading = func() *readingDevice {
	d := &readingDevice{Device: device.CPU}
	device.Register(d)
	return d
}()

// Batches imported together read their sizes in one ReadValues; a batch
// whose read fails fails alone, the others imported as they would be on
// their own.
func TestImportDeviceRecordBatchesReadTogether(t *testing.T) {
	defer identity.Set(identity.Set(false)) // imported as C's, not handed back
	ctx := context.Background()
	rec := stringBatch(t, 3, 10)
	const n = 4
	arrs := make([]*abi.DeviceArray, n)
	dbs := make([]*cdevice.DeviceRecordBatch, n)
	export := func() {
		for i := range arrs {
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, reading)
			if err != nil {
				t.Fatal(err)
			}
			dbs[i], arrs[i] = db, offHeap[abi.DeviceArray](t)
			if err := db.Export(arrs[i], nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(bs []*cdevice.DeviceRecordBatch, errs []error, bad int) {
		t.Helper()
		for i, b := range bs {
			if i == bad {
				if !errors.Is(errs[i], errPoisoned) || b != nil {
					t.Errorf("batch %d, poisoned: %v, %v; want errPoisoned", i, b, errs[i])
				}
				continue
			}
			if errs[i] != nil {
				t.Fatalf("batch %d: %v", i, errs[i])
			}
			host, err := b.ToHost(ctx)
			b.Release()
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(rec, host) {
				t.Errorf("batch %d: values differ", i)
			}
			host.Release()
		}
		for _, db := range dbs {
			db.Release()
		}
	}

	export()
	before := reading.calls.Load()
	bs, errs := cdevice.ImportDeviceRecordBatchesOnDevice(context.Background(), arrs, rec.Schema())
	if c := reading.calls.Load() - before; c != 1 {
		t.Errorf("%d batches imported with %d ReadValues, want 1", n, c)
	}
	check(bs, errs, -1)

	export()
	reading.poison.Store(uintptr(dbs[2].Columns[1].Buffers[1].Ptr))
	defer reading.poison.Store(0)
	before = reading.calls.Load()
	bs, errs = cdevice.ImportDeviceRecordBatchesOnDevice(context.Background(), arrs, rec.Schema())
	if c := reading.calls.Load() - before; c != 1+n {
		t.Errorf("a failed read together, then each batch's: %d ReadValues, want %d", c, 1+n)
	}
	check(bs, errs, 2)
	for i, arr := range arrs {
		if arr.Array.Release != 0 {
			t.Errorf("array %d not taken", i)
		}
	}
}
