package cdevice_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/device"
	_ "github.com/purearrow/cdevice/device/opencl" // PoCL in CI
)

// firstDevice returns the first device of the named backend, or skips.
func firstDevice(tb testing.TB, backend string) device.Device {
	for _, b := range device.Backends() {
		if b.Name() != backend {
			continue
		}
		info, err := b.Probe(context.Background())
		if err != nil || len(info.Devices) == 0 {
			tb.Skipf("%s: %v", backend, err)
		}
		return info.Devices[0]
	}
	tb.Skipf("no %s backend registered", backend)
	return nil
}

// int64Array has n int64 values and no nulls.
func int64Array(tb testing.TB, n int) arrow.Array {
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i)
	}
	a := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0))
	tb.Cleanup(a.Release)
	return a
}

const copyBenchBytes = 256 << 20

func BenchmarkCopyToDevice(b *testing.B) {
	dev := firstDevice(b, "opencl")
	a := int64Array(b, copyBenchBytes/8)
	b.SetBytes(copyBenchBytes)
	for b.Loop() {
		da, err := cdevice.CopyToDevice(context.Background(), a, dev)
		if err != nil {
			b.Fatal(err)
		}
		da.Release()
	}
}

func BenchmarkToHost(b *testing.B) {
	dev := firstDevice(b, "opencl")
	da, err := cdevice.CopyToDevice(context.Background(), int64Array(b, copyBenchBytes/8), dev)
	if err != nil {
		b.Fatal(err)
	}
	defer da.Release()
	b.SetBytes(copyBenchBytes)
	for b.Loop() {
		h, err := da.ToHost(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		h.Release()
	}
}
