package cdevice_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// countingDevice is CPU memory presented as a device the host cannot read
// directly (ext_dev:0), counting synchronizations, so tests can check how
// often an import waits on a device.
type countingDevice struct {
	device.Device
	syncs, allocs, frees atomic.Int64
}

func (d *countingDevice) Alloc(size int) (device.Pointer, error) {
	d.allocs.Add(1)
	return d.Device.Alloc(size)
}

func (d *countingDevice) Free(p device.Pointer) error {
	d.frees.Add(1)
	return d.Device.Free(p)
}

func (*countingDevice) Type() abi.DeviceType { return abi.DeviceExtDev }
func (*countingDevice) ID() int64            { return 0 }
func (*countingDevice) Name() string         { return "counting ext_dev:0" }
func (*countingDevice) HostAccessible() bool { return false }

func (d *countingDevice) NewStream() (device.Stream, error) {
	s, err := d.Device.NewStream()
	return countingStream{s, &d.syncs}, err
}

type countingStream struct {
	device.Stream
	syncs *atomic.Int64
}

func (s countingStream) Synchronize() error {
	s.syncs.Add(1)
	return s.Stream.Synchronize()
}

var counting = func() *countingDevice {
	d := &countingDevice{Device: device.CPU}
	device.Register(d)
	return d
}()

// stringBatch has cols utf8 columns of rows rows each.
func stringBatch(tb testing.TB, cols, rows int) arrow.RecordBatch {
	fields := make([]arrow.Field, cols)
	arrs := make([]arrow.Array, cols)
	for c := range cols {
		fields[c] = arrow.Field{Name: fmt.Sprintf("s%d", c), Type: arrow.BinaryTypes.String, Nullable: true}
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for r := range rows {
			b.Append(fmt.Sprintf("row %d of column %d", r, c))
		}
		arrs[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	tb.Cleanup(rec.Release)
	return rec
}

// exportOnCounting puts rec on the counting device and exports it.
func exportOnCounting(tb testing.TB, rec arrow.RecordBatch, arr *abi.DeviceArray, sch *abi.Schema) {
	db, err := cdevice.CopyRecordBatchToDevice(context.Background(), rec, counting)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Release()
	if err := db.Export(arr, sch); err != nil {
		tb.Fatal(err)
	}
}

// Sizes of 64 string columns' data buffers come from device memory in one
// batch: one synchronization, not 64.
func TestImportDeviceStringsSyncsOnce(t *testing.T) {
	rec := stringBatch(t, 64, 100)
	arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
	exportOnCounting(t, rec, arr, sch)
	before := counting.syncs.Load()
	got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
	if err != nil {
		t.Fatal(err)
	}
	if n := counting.syncs.Load() - before; n != 1 {
		t.Errorf("import synchronized %d times, want 1", n)
	}
	for i, c := range got.Columns {
		if want := int64(rec.Column(i).(*array.String).ValueOffsets()[100]); c.Buffers[2].Size != want {
			t.Errorf("column %d: data size %d, want %d", i, c.Buffers[2].Size, want)
		}
	}
	host, err := got.ToHost(context.Background())
	got.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Release()
	if !array.RecordEqual(rec, host) {
		t.Error("values differ after the round trip")
	}
}

func BenchmarkImportDeviceStrings(b *testing.B) {
	rec := stringBatch(b, 64, 100)
	arr, sch := offHeap[abi.DeviceArray](b), offHeap[abi.Schema](b)
	var syncs int64
	for b.Loop() {
		b.StopTimer()
		exportOnCounting(b, rec, arr, sch)
		before := counting.syncs.Load()
		b.StartTimer()
		got, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), arr, sch)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		syncs += counting.syncs.Load() - before
		got.Release()
		b.StartTimer()
	}
	b.ReportMetric(float64(syncs)/float64(b.N), "syncs/op")
}
