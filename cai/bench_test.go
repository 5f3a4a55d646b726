package cai_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
)

// benchDevices are the fake CUDA device and, with gcc, cuda:0 of the CUDA
// test double.
func benchDevices(b *testing.B) map[string]device.Device {
	devs := map[string]device.Device{"fake": fake}
	if _, err := exec.LookPath("gcc"); err == nil {
		devs["double"] = cudaDouble(b).dev
	}
	return devs
}

func float64Array(b *testing.B, n int, dev device.Device) *cdevice.DeviceArray {
	bld := array.NewFloat64Builder(memory.DefaultAllocator)
	defer bld.Release()
	for i := range n {
		bld.Append(float64(i))
	}
	a := bld.NewArray()
	defer a.Release()
	return toDevice(b, a, dev)
}

// Export is zero-copy: the time does not grow with the element count.
func BenchmarkCAIExport(b *testing.B) {
	for name, dev := range benchDevices(b) {
		for _, n := range []int{1_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				da := float64Array(b, n, dev)
				defer da.Release()
				b.ReportAllocs()
				for b.Loop() {
					e, err := cai.Export(ctx, da)
					if err != nil {
						b.Fatal(err)
					}
					e.Release()
				}
			})
		}
	}
}

// Import is zero-copy: the time does not grow with the element count.
func BenchmarkCAIImport(b *testing.B) {
	for name, dev := range benchDevices(b) {
		for _, n := range []int{1_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				da := float64Array(b, n, dev)
				defer da.Release()
				e, err := cai.Export(ctx, da)
				if err != nil {
					b.Fatal(err)
				}
				defer e.Release()
				d := e.Interface
				b.ReportAllocs()
				for b.Loop() {
					back, err := cai.Import(ctx, &d, cai.WithDevice(dev))
					if err != nil {
						b.Fatal(err)
					}
					back.Release()
				}
			})
		}
	}
}
