package cdevice_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

func exampleBatch() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "", "c"}, []bool{true, false, true})
	return b.NewRecordBatch()
}

// Export a record batch into C structs and import it back, as a C consumer
// and producer on either side would.
func Example() {
	rec := exampleBatch()
	defer rec.Release()

	// Structs that C fills or keeps live off the Go heap.
	arr, sch := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	defer cdevice.Free(arr)
	defer cdevice.Free(sch)

	if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
		panic(err)
	}
	// ... hand arr and sch to C; here Go imports them back.
	got, err := cdevice.ImportRecordBatch(arr, sch)
	if err != nil {
		panic(err)
	}
	defer got.Release()
	fmt.Println(got.Schema().Field(1), got.NumRows(), got.Column(1))
	// Output: name: type=utf8, nullable 3 ["a" (null) "c"]
}

// Copy a record batch to a device, export it as an ArrowDeviceArray, import
// it and copy it back to Go memory.
func ExampleCopyRecordBatchToDevice() {
	ctx := context.Background()
	rec := exampleBatch()
	defer rec.Release()

	dev := device.CPU // or loader.Default(ctx)
	db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, dev)
	if err != nil {
		panic(err)
	}
	out, sch := cdevice.New[abi.DeviceArray](), cdevice.New[abi.Schema]()
	defer cdevice.Free(out)
	defer cdevice.Free(sch)
	err = db.Export(out, sch) // sync_event: the copies' event (NULL on the CPU)
	db.Release()              // the export holds its own reference
	if err != nil {
		panic(err)
	}
	imported, err := cdevice.ImportDeviceRecordBatchOnDevice(context.Background(), out, sch)
	if err != nil {
		panic(err)
	}
	defer imported.Release()
	host, err := imported.ToHost(ctx)
	if err != nil {
		panic(err)
	}
	defer host.Release()
	fmt.Println(out.DeviceType, array.RecordEqual(rec, host))
	// Output: cpu true
}

// Check an imported array's contents in full before reading it.
func ExampleValidateFull() {
	rec := exampleBatch()
	defer rec.Release()
	fmt.Println(cdevice.ValidateFull(rec.Column(1)))
	// Output: <nil>
}

// See what is still held across the C boundary.
func ExampleLiveLeaks() {
	rec := exampleBatch()
	defer rec.Release()
	arr := cdevice.New[abi.Array]()
	defer cdevice.Free(arr)
	if err := cdevice.ExportRecordBatch(rec, arr, nil); err != nil {
		panic(err)
	}
	fmt.Println("exports while C holds it:", cdevice.LiveLeaks().Exports())
	got, err := cdevice.ImportRecordBatchWithSchema(arr, rec.Schema())
	if err != nil {
		panic(err)
	}
	got.Release() // the import released the export; this releases the copy
	fmt.Println("after release:", cdevice.LiveLeaks().Exports())
	// Output:
	// exports while C holds it: 1
	// after release: 0
}

// Ask an import to check every element too (offsets, dictionary indices,
// run ends, UTF-8), not only structure.
func ExampleWithFullValidation() {
	rec := exampleBatch()
	defer rec.Release()
	arr, sch := cdevice.New[abi.Array](), cdevice.New[abi.Schema]()
	defer cdevice.Free(arr)
	defer cdevice.Free(sch)
	if err := cdevice.ExportRecordBatch(rec, arr, sch); err != nil {
		panic(err)
	}
	got, err := cdevice.ImportRecordBatch(arr, sch, cdevice.WithFullValidation())
	if err != nil {
		panic(err) // a corrupt batch is refused, and released
	}
	defer got.Release()
	fmt.Println(got.NumRows())
	// Output: 3
}
