package cdevice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

// The host and the device import walk a tree with the same checks and
// refuse the same lies with the same message (lies that only a C producer
// can tell, about pointers and counts of pointers, are in hostile_test.go:
// our export's pointer arrays are Go memory, exactly as long as they say).
func TestWalkersAgree(t *testing.T) {
	lies := []struct {
		name string
		lie  func(a *abi.Array)
		want string
	}{
		{"nulls without a validity bitmap", func(a *abi.Array) { a.NullCount = 2 }, "null_count 2 without a validity bitmap"},
	}
	for _, l := range lies {
		for _, onDevice := range []bool{false, true} {
			t.Run(l.name, func(t *testing.T) {
				b := array.NewInt32Builder(memory.DefaultAllocator)
				b.AppendValues([]int32{1, 2, 3}, nil) // no nulls: no validity bitmap
				col := b.NewArray()
				b.Release()
				defer col.Release()
				arr, sch := offHeap[abi.DeviceArray](t), offHeap[abi.Schema](t)
				ok(t, cdevice.ExportDeviceArray(col, arr, sch))
				if arr.Array.Buffer(0) != nil {
					t.Fatal("an array without nulls was exported with a validity bitmap")
				}
				l.lie(&arr.Array)
				var err error
				if onDevice {
					var da *cdevice.DeviceArray
					if da, err = cdevice.ImportDeviceArrayOnDevice(context.Background(), arr, sch); da != nil {
						da.Release()
					}
				} else {
					var a interface{ Release() }
					if a, err = cdevice.ImportDeviceArray(context.Background(), arr, sch); a != nil {
						a.Release()
					}
				}
				if err == nil || !strings.Contains(err.Error(), l.want) {
					t.Fatalf("onDevice %v: %v, want an error saying %q", onDevice, err, l.want)
				}
				if !arr.Array.Released() {
					t.Error("the refused input was not released")
				}
			})
		}
	}
}
