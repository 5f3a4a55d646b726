package dlpack_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
)

var benchSizes = []int{1_000, 1_000_000}

// BenchmarkDLPackExport: Export of an n-element float64 array on the CPU
// and the deleter call; zero-copy, so the time does not grow with n.
func BenchmarkDLPackExport(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			da := onDevice(b, fromBytes(b, arrow.PrimitiveTypes.Float64, n, make([]byte, 8*n)), cpuDev)
			b.ReportAllocs()
			for b.Loop() {
				mt, err := dlpack.Export(context.Background(), da)
				if err != nil {
					b.Fatal(err)
				}
				mt.Delete()
			}
		})
	}
}

// BenchmarkDLPackImport: Import of an n-element float64 tensor a C producer
// made (dl_wrap: a tensor around existing memory) and the release that calls
// its C deleter; zero-copy, so the time does not grow with n. It includes
// the C call that makes the tensor.
func BenchmarkDLPackImport(b *testing.B) {
	c := loadC(b)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			mem, err := ffi.Calloc(uintptr(8 * n))
			must(b, err)
			defer ffi.Free(mem)
			params := spec{versioned: true, devType: abi.DeviceCPU, dtype: dtF64, shape: []int64{int64(n)}}.params(b)
			b.ReportAllocs()
			for b.Loop() {
				p := c.wrap(params, uintptr(mem))
				a, err := dlpack.Import(context.Background(), dlpack.ManagedTensorVersionedAt(p))
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
	}
}

// BenchmarkDLPackRoundTrip: Export, Import of our own tensor (its deleter is
// called directly, not through C) and release.
func BenchmarkDLPackRoundTrip(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			da := onDevice(b, fromBytes(b, arrow.PrimitiveTypes.Float64, n, make([]byte, 8*n)), cpuDev)
			b.ReportAllocs()
			for b.Loop() {
				mt, err := dlpack.Export(context.Background(), da)
				if err != nil {
					b.Fatal(err)
				}
				a, err := dlpack.Import(context.Background(), mt)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
	}
}
