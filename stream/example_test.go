package stream_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/stream"
)

// exampleReader returns a reader of two batches of two rows: (id int64,
// name utf8).
func exampleReader() array.RecordReader {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	var batches []arrow.RecordBatch
	for _, names := range [][]string{{"ada", "bob"}, {"cy", "di"}} {
		for _, name := range names {
			b.Field(0).(*array.Int64Builder).Append(int64(len(name)))
			b.Field(1).(*array.StringBuilder).Append(name)
		}
		rec := b.NewRecordBatch()
		defer rec.Release() // the reader holds its own reference
		batches = append(batches, rec)
	}
	rdr, err := array.NewRecordReader(schema, batches)
	if err != nil {
		log.Fatal(err)
	}
	return rdr
}

// A Go reader exported as an ArrowArrayStream, and a stream imported as a
// reader. Here the consumer of the export is Go itself; a C consumer gets
// the same struct.
func ExampleExportReader() {
	rdr := exampleReader()
	defer rdr.Release() // the export holds its own reference

	// The struct a consumer is handed lives in C heap memory.
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReader(rdr, s); err != nil {
		log.Fatal(err)
	}

	r, err := stream.ImportReader(s)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release() // releases the C stream
	fmt.Println(r.Schema())
	for r.Next() {
		rec := r.RecordBatch()
		fmt.Println(rec.NumRows(), rec.Column(0), rec.Column(1))
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// schema:
	//   fields: 2
	//     - id: type=int64
	//     - name: type=utf8
	// 2 [3 3] ["ada" "bob"]
	// 2 [2 2] ["cy" "di"]
}

// Reading an imported stream with a range-over-func loop: the loop stops
// at the end, at a producer error, or when the context is done.
func ExampleReader_All() {
	rdr := exampleReader()
	defer rdr.Release()
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReader(rdr, s); err != nil {
		log.Fatal(err)
	}

	r, err := stream.ImportReader(s)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	rows := int64(0)
	for rec, err := range r.All(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		// rec is valid in the loop body; Retain it to keep it longer.
		rows += rec.NumRows()
		fmt.Println(rec.Column(1))
	}
	fmt.Println(rows, "rows")
	// Output:
	// ["ada" "bob"]
	// ["cy" "di"]
	// 4 rows
}

// A reader copied onto a device batch by batch as an
// ArrowDeviceArrayStream, and read back as host record batches. device.CPU
// is always there; a GPU device from a backend's Probe works the same way.
func ExampleExportReaderToDevice() {
	ctx := context.Background()
	rdr := exampleReader()
	defer rdr.Release()

	s := cdevice.New[abi.DeviceArrayStream]()
	defer cdevice.Free(s)
	if err := stream.ExportReaderToDevice(ctx, rdr, device.CPU, s); err != nil {
		log.Fatal(err)
	}

	r, err := stream.ImportDeviceStream(s)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	fmt.Println("device:", r.DeviceType())
	for rec, err := range r.HostRecords(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.Column(0), rec.Column(1)) // valid in the loop body
	}
	// Output:
	// device: cpu
	// [3 3] ["ada" "bob"]
	// [2 2] ["cy" "di"]
}
