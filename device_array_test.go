package cdevice_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

// testDevices lists the devices the device tests run on: the CPU, and every
// device of every backend that probes successfully on this machine.
func testDevices(t *testing.T) []device.Device {
	devs := []device.Device{device.CPU}
	for _, b := range device.Backends() {
		if info, err := b.Probe(context.Background()); err == nil {
			devs = append(devs, info.Devices...)
		}
	}
	return devs
}

// Every gold batch goes host → device → ArrowDeviceArray → import → host on
// every test device and comes back equal.
func TestDeviceGoldRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, dev := range testDevices(t) {
		t.Run(dev.Name(), func(t *testing.T) {
			for _, c := range goldCases(t) {
				t.Run(c, func(t *testing.T) {
					_, recs := readGold(t, c+".stream")
					for i, rec := range recs {
						db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
						if err != nil {
							t.Fatalf("batch %d: copy: %v", i, err)
						}
						arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
						err = db.Export(arr, sch)
						db.Release() // the export holds its own reference
						if err != nil {
							t.Fatalf("batch %d: export: %v", i, err)
						}
						if arr.DeviceType != dev.Type() || arr.DeviceID != dev.ID() {
							t.Errorf("exported as %s:%d, want %s:%d", arr.DeviceType, arr.DeviceID, dev.Type(), dev.ID())
						}
						if dev.Type() == abi.DeviceCPU && arr.SyncEvent != 0 {
							t.Error("a CPU array must have a NULL sync_event")
						}
						got, err := cdevice.ImportDeviceRecordBatch(arr, sch)
						if err != nil {
							t.Fatalf("batch %d: import: %v", i, err)
						}
						host, err := got.ToHost(ctx)
						got.Release()
						if err != nil {
							t.Fatalf("batch %d: to host: %v", i, err)
						}
						if !array.RecordEqual(rec, host) {
							t.Errorf("batch %d differs:\nwant %v\ngot  %v", i, rec, host)
						}
						host.Release()
					}
				})
			}
		})
	}
}

// Single arrays: CopyToDevice → ToHost, CopyTo another device, and
// ImportDeviceArray (arrow.Array result) of an exported DeviceArray.
func TestDeviceArrayCopies(t *testing.T) {
	ctx := context.Background()
	rec := wideBatch(t)
	for _, dev := range testDevices(t) {
		t.Run(dev.Name(), func(t *testing.T) {
			for i, col := range rec.Columns() {
				da, err := cdevice.CopyToDevice(ctx, col, dev)
				if err != nil {
					t.Fatalf("column %d: %v", i, err)
				}
				moved, err := da.CopyTo(ctx, device.CPU)
				if err != nil {
					t.Fatal(err)
				}
				host, err := moved.ToHost(ctx)
				moved.Release()
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(col, host) {
					t.Errorf("column %d via CopyTo: got %v want %v", i, host, col)
				}
				host.Release()

				arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
				if err := da.Export(arr, sch); err != nil {
					t.Fatal(err)
				}
				da.Release()
				got, err := cdevice.ImportDeviceArray(arr, sch)
				if err != nil {
					t.Fatalf("column %d: ImportDeviceArray: %v", i, err)
				}
				if !array.Equal(col, got) {
					t.Errorf("column %d via ImportDeviceArray: got %v want %v", i, got, col)
				}
				got.Release()
			}
		})
	}
}

// An array on a device with no loaded backend imports as metadata; reading
// it fails with ErrNoDevice, and release still reaches the producer.
func TestDeviceArrayWithoutBackend(t *testing.T) {
	ctx := context.Background()
	rec := wideBatch(t)
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
	if err := db.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	db.Release()
	arr.DeviceType, arr.DeviceID = abi.DeviceVulkan, 7 // no backend for it
	got, err := cdevice.ImportDeviceRecordBatch(arr, sch)
	if err != nil {
		t.Fatalf("metadata import: %v", err)
	}
	if got.Device() != nil || got.Length != rec.NumRows() || len(got.Columns) != int(rec.NumCols()) {
		t.Errorf("metadata: device %v, %d rows, %d columns", got.Device(), got.Length, len(got.Columns))
	}
	if _, err := got.ToHost(ctx); !errors.Is(err, cdevice.ErrNoDevice) {
		t.Errorf("ToHost: %v, want ErrNoDevice", err)
	}
	got.Release()
	if l := cdevice.LiveLeaks(); l.Exports != 0 || l.Imports != 0 || l.DeviceArrays != 0 {
		t.Errorf("after release: %s", l)
	}

	// ImportDeviceArray refuses it and releases the input.
	db, err = cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Export(arr, sch); err != nil {
		t.Fatal(err)
	}
	db.Release()
	arr.DeviceType = abi.DeviceMetal
	if _, err := cdevice.ImportDeviceArray(arr, sch); !errors.Is(err, cdevice.ErrNoDevice) {
		t.Errorf("ImportDeviceArray: %v, want ErrNoDevice", err)
	}
	if !arr.Array.Released() || !sch.Released() {
		t.Error("a failed import must release its input")
	}
	_ = arrow.Null
}
