package dlpack_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
)

// A float64 array handed to a DLPack consumer without a copy, and a DLPack
// tensor taken back as an Arrow array; the deleter runs exactly once.
func Example() {
	ctx := context.Background()
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.AppendValues([]float64{1.5, 2.5, 3.5}, nil)
	col := b.NewArray()
	b.Release()
	defer col.Release()

	da, err := cdevice.CopyToDevice(ctx, col, device.CPU)
	if err != nil {
		panic(err)
	}
	t, err := dlpack.Export(context.Background(), da) // keeps da alive until the deleter runs
	da.Release()
	if err != nil {
		panic(err)
	}
	fmt.Println(t.DLTensor.Ndim, t.DLTensor.ShapeSlice(), t.DLTensor.Dtype.Code == dlpack.CodeFloat, t.DLTensor.Dtype.Bits)

	// A DLPack consumer (here Go itself) takes the tensor.
	back, err := dlpack.Import(context.Background(), t) // calls the deleter when back is released
	if err != nil {
		panic(err)
	}
	host, err := back.ToHost(ctx)
	back.Release()
	if err != nil {
		panic(err)
	}
	defer host.Release()
	fmt.Println(host)
	// Output:
	// 1 [3] true 64
	// [1.5 2.5 3.5]
}
