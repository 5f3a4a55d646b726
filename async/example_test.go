package async_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/async"
	"github.com/purearrow/cdevice/device"
)

// A Go producer and a Go consumer of an async device stream, connected
// through the C structs: Produce drives the ArrowAsyncDeviceStreamHandler
// that h.C() returns, exactly as it would drive one written in C, and the
// Handler would take a C producer's calls the same way. The batches live on
// device.CPU; a GPU device from a backend's Probe works the same way.
func Example() {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)

	// The source: record batches copied onto the device one by one. Each
	// batch it yields belongs to Produce, which hands it over to the
	// consumer through a task.
	source := func(yield func(async.Batch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, names := range [][]string{{"ada", "bob"}, {"cy", "di", "eve"}} {
			for _, name := range names {
				b.Field(0).(*array.Int64Builder).Append(int64(len(name)))
				b.Field(1).(*array.StringBuilder).Append(name)
			}
			rec := b.NewRecordBatch()
			db, err := cdevice.CopyRecordBatchToDevice(ctx, rec, device.CPU)
			rec.Release()
			if !yield(async.Batch{DeviceRecordBatch: db}, err) || err != nil {
				return
			}
		}
	}

	// The consumer: a handler that requests two batches at a time.
	h, err := async.NewHandler(async.WithQueueDepth(2))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	produced := make(chan error, 1)
	go func() {
		produced <- async.Produce(ctx, schema, device.CPU.Type(), source, h.C())
	}()

	sc, err := h.Schema(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sc)
	for batch, err := range h.All(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		// batch is valid in the loop body; copy it to Go memory to read it.
		rec, err := batch.ToHost(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(batch.Device().Type(), rec.NumRows(), rec.Column(0), rec.Column(1))
		rec.Release()
	}
	if err := <-produced; err != nil {
		log.Fatal(err)
	}
	<-h.Done() // the producer has released the handler
	fmt.Println("done")
	// Output:
	// schema:
	//   fields: 2
	//     - id: type=int64
	//     - name: type=utf8
	// cpu 2 [3 3] ["ada" "bob"]
	// cpu 3 [2 2 3] ["cy" "di" "eve"]
	// done
}
